import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { percentileOf, writeDocsBlock } from '@state-relay/testkit';
import { int, provenance, ROOT, runMeta, writeJson, type RunMeta } from './report';
import { GROWTH_LIMIT, runSoak, type SoakOptions, type SoakResult } from './soak';
import { soakChart } from './soak-chart';
import { FaultStack } from './stack';

// `pnpm soak` (cli.js starts jest on this file with the options in STATE_RELAY_FAULTS_CLI): the
// soak, its figures, docs/faults/soak.json, docs/faults/soak.svg and the soak block of
// docs/faults.md (unless --no-docs). Fails if a sweep or a fault went wrong or memory grew.

const cli = JSON.parse(process.env.STATE_RELAY_FAULTS_CLI ?? 'null') as {
  minutes: number;
  rate: number;
  keys: number;
  'sweep-every': number;
  'fault-every': number;
  seed: number;
  docs: boolean;
  command: string;
} | null;
if (!cli) throw new Error('run through `pnpm soak` (test/faults/cli.js), which passes the options');

const options: SoakOptions = {
  minutes: cli.minutes,
  rate: cli.rate,
  keys: cli.keys,
  sweepEverySec: cli['sweep-every'],
  faultEverySec: cli['fault-every'],
  seed: cli.seed,
};
const say = (line: string) => process.stdout.write(`${line}\n`);

function summary(r: SoakResult): string[] {
  const c = r.calibration;
  const done = r.sweeps.filter((s) => s.endT !== undefined);
  const p99 = r.samples.flatMap((s) => (s.p99Ms === null ? [] : [s.p99Ms]));
  return [
    `load: asked ${int(c.asked)} events/s; in 45 s of calibration the generator offered ${int(c.offered)} and the processor ` +
      `committed ${int(c.committed)} events/s: ${c.held ? 'held' : 'not held'}; soaked at ${int(c.rate)} events/s`,
    `${r.samples.length} samples over ${r.samples[r.samples.length - 1]?.t ?? 0} s; events/s committed median ${int(
      percentileOf(
        r.samples.map((s) => s.eventsPerSec),
        50,
      ),
    )}; ` +
      `event commit p99 per 10 s window: median ${percentileOf(p99, 50)} ms, max ${Math.max(...p99)} ms; ` +
      `lag at the end of the measured phase ${int(r.samples[r.samples.length - 1]?.lag ?? 0)} events`,
    `${done.length} of ${r.sweeps.length} sweeps completed, each ${done[0]?.matched ?? '?'} accounts; duration median ${percentileOf(
      done.map((s) => s.endT! - s.startT),
      50,
    )} s`,
    `faults: ${r.faults.map((f) => `${f.fault} at ${Math.round(f.t / 60)} min → ${f.recoveryMs === undefined ? 'FAILED' : `${(f.recoveryMs / 1000).toFixed(1)} s`}`).join('; ') || 'none'}`,
    ...r.memory.map(
      (m) =>
        `memory ${m.process}: second quarter median ${m.secondQuarterMiB.toFixed(0)} MiB, last quarter ${m.lastQuarterMiB.toFixed(0)} MiB, ` +
        `× ${m.ratio.toFixed(2)} (limit ${GROWTH_LIMIT}): ${m.grew ? 'GREW' : 'flat'}`,
    ),
    ...(r.error ? [`FAILED: ${r.error.split('\n')[0]}`] : []),
  ];
}

function markdown(r: SoakResult, meta: RunMeta): string {
  const broker = r.samples.flatMap((s) => (s.rssMiB.broker ? [s.rssMiB.broker] : []));
  return [
    `Made by \`${meta.command}\` on ${provenance(meta)}; ${int(options.keys)} accounts, a sweep every ` +
      `${options.sweepEverySec} s, a fault every ${options.faultEverySec} s. Raw figures: ` +
      '[`docs/faults/soak.json`](faults/soak.json).',
    '',
    ...summary(r).map((l) => `- ${l}`),
    `- broker (JVM, \`-Xmx768m\`; container memory, not judged): median ${percentileOf(broker, 50).toFixed(0)} MiB, max ${Math.max(...broker).toFixed(0)} MiB`,
    '',
    '![Soak: memory, latency and rates over time](faults/soak.svg)',
  ].join('\n');
}

describe('soak', () => {
  let stack: FaultStack | undefined;
  // Removing a deployment's containers takes longer than jest's 5 s hook default on a busy machine.
  afterAll(async () => {
    await stack?.stop();
  }, 300_000);

  it(
    `${options.minutes} minutes of load, sweeps and faults: no failure, no memory growth`,
    async () => {
      const meta = runMeta(cli.command);
      say(`\n[soak] ${cli.command}: seed ${options.seed}; commit ${meta.commit.slice(0, 12)}`);
      if (meta.uncommitted.length > 0)
        say(
          `[soak] uncommitted changes in the code under test (services, packages, test/faults): ${meta.uncommitted.join('; ')}`,
        );
      stack = await FaultStack.start();
      const result = await runSoak(stack, options, say);
      meta.finishedAt = new Date().toISOString();
      for (const line of summary(result)) say(`[soak] ${line}`);
      if (cli.docs) {
        await writeJson(path.join(ROOT, 'docs/faults/soak.json'), { meta, ...result });
        const subtitle = `${cli.command} · commit ${meta.commit.slice(0, 12)} · ${result.calibration.rate} events/s`;
        await writeFile(path.join(ROOT, 'docs/faults/soak.svg'), soakChart(result, subtitle));
        writeDocsBlock(path.join(ROOT, 'docs/faults.md'), 'soak', markdown(result, meta));
        say('[soak] wrote docs/faults/soak.json, docs/faults/soak.svg and the soak block of docs/faults.md');
      }
      expect({ error: result.error, grew: result.memory.filter((m) => m.grew).map((m) => m.process) }).toEqual({
        error: undefined,
        grew: [],
      });
    },
    (options.minutes + 30) * 60_000,
  );
});
