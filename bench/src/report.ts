import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BrokerProbe } from './broker-probe';
import type { CpuUse } from './cpu';
import type { Machine } from './machine';
import type { BenchOptions } from './options';
import type { LatencySummary, TransactionSummary } from './stats';
import { sweepLabel, type SweepComparison } from './sweeps';
import type { ThroughputResult } from './throughput';

export interface Target {
  name: string;
  aim: string;
  measured: string;
  met: boolean;
}

export interface BenchReport {
  machine: Machine;
  options: BenchOptions;
  durationSec: number;
  broker: BrokerProbe;
  throughput: ThroughputResult;
  sweeps: SweepComparison;
  targets: Target[];
}

/** The aims of issues 3 and 6, judged on this run. */
export function judgeTargets(t: ThroughputResult, s: SweepComparison): Target[] {
  const relays = s.results.filter((r) => r.mode === 'relay');
  const each = (f: (r: (typeof relays)[number]) => string) => relays.map(f).join(' / ');
  const relayTargets: Target[] = relays.length
    ? [
        {
          name: `relay sweep: p99 / baseline p99 (issue 6)${relays.length > 1 ? ', each round' : ''}`,
          aim: '≤ 1.5',
          measured: each((r) => r.p99Ratio.toFixed(2)),
          met: relays.every((r) => r.p99Ratio <= 1.5),
        },
        {
          name: `relay sweep: longest gap in event commits (issue 6)${relays.length > 1 ? ', each round' : ''}`,
          aim: '≤ 250 ms',
          measured: `${each((r) => n(r.longestGapMs))} ms`,
          met: relays.every((r) => r.longestGapMs <= 250),
        },
      ]
    : [];
  return [
    {
      name: 'events/s with exactly-once (issue 3)',
      aim: '≥ 20,000',
      measured: n(t.eos.eventsPerSec),
      met: t.eos.eventsPerSec >= 20_000,
    },
    {
      name: 'restore, records/s (issue 3)',
      aim: '≥ 100,000',
      measured: n(t.restore.recordsPerSec),
      met: t.restore.recordsPerSec >= 100_000,
    },
    { name: 'exactly-once / raw ceiling (issue 6)', aim: '≥ 0.5', measured: t.ratio.toFixed(2), met: t.ratio >= 0.5 },
    ...relayTargets,
    {
      name: 'every sweep reaches the same, correct final state',
      aim: 'oracle',
      measured: s.sameFinalState ? 'PASS' : 'FAIL',
      met: s.sameFinalState,
    },
  ];
}

/** The results as markdown: printed as the run's table and put into docs/benchmarks.md. */
export function resultsMarkdown(r: BenchReport): string {
  const { machine: m, options: o, throughput: t, sweeps: s, broker: b } = r;
  const lines: string[] = [];
  const push = (...l: string[]) => lines.push(...l);
  push(
    `_Last run: ${m.date.slice(0, 16).replace('T', ' ')} UTC, \`pnpm bench${o.label === 'default' ? '' : ` (${o.label})`}\`, ${(r.durationSec / 60).toFixed(1)} min._`,
    '',
    `**Machine.** ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB RAM, Linux ${m.kernel}, Node ${m.node}, kafkajs ${m.kafkajs}; ` +
      `one broker \`${m.kafkaImage}\` in ${m.containerRuntime}, on the same machine as every client. ` +
      `Load average when the run started: ${m.loadAverageAtStart} (${m.loadAverageAtStart > m.cpus ? 'other work was competing for the CPUs: expect noise' : 'quiet'}).`,
    '',
    `**Settings.** ${o.partitions} partitions. Throughput input: ${n(t.events)} events (${n(t.accounts)} accounts × ${o.eventsPerAccount}). ` +
      `Sweeps: ${n(s.keys)} keys, ${n(s.candidates)} of them dormant-eligible; steady load ${n(s.rate)} events/s; ${o.baselineSec} s baseline; ` +
      `chunked sweep ${n(s.chunkKeys)} keys per slice; relay at most ${n(s.relayRate)} commands/s, pausing above a command lag of ${n(o.relayMaxLag)}.` +
      whatIf(o),
    '',
    '### Targets',
    '',
    '| target | aim | measured | |',
    '| --- | --- | --- | --- |',
    ...r.targets.map((x) => `| ${x.name} | ${x.aim} | ${x.measured} | ${x.met ? 'met' : '**missed**'} |`),
    '',
    '### Throughput (pre-produced input, at full speed) and restore',
    '',
    '| pipeline | events/s | batch p50 / p99 / max (ms) | records per batch | CPU cores: pipeline, broker (machine busy) | peak RSS |',
    '| --- | ---: | --- | ---: | --- | ---: |',
    `| raw kafkajs consume → produce (no state, no transactions) | ${n(t.raw.eventsPerSec)} | ${lat(t.raw.batchMs)} | | ${cores(t.raw.cpu)} | ${mb(t.raw.peakRssBytes)} |`,
    `| processor, exactly-once | ${n(t.eos.eventsPerSec)} | ${lat(t.eos.batchMs)} | ${n(t.eos.recordsPerBatch)} | ${cores(t.eos.cpu)} | ${mb(t.eos.peakRssBytes)} (heap ${mb(t.eos.memory.heapUsed)}) |`,
    `| ratio | **${t.ratio.toFixed(2)}** | | | | |`,
    '',
    `State after the throughput run equals the oracle: ${t.eos.stateMatchesOracle ? 'PASS' : 'FAIL'}` +
      `${warningsLine(t.eos.warnings)}. Its ${n(t.eos.transactions)} transactions took ${lat(t.eos.transactionMs.total)} ms (p50 / p99 / max; ` +
      `p50 of sendBatch ${n(t.eos.transactionMs.send.p50)}, sendOffsets ${n(t.eos.transactionMs.offsets.p50)}, commit ${n(t.eos.transactionMs.commit.p50)} ms). ` +
      `Wall time from process start to every offset committed: ${(t.eos.wallMs / 1000).toFixed(1)} s.`,
    '',
    `Restore into an empty state directory: ${n(t.restore.records)} changelog records in ${(t.restore.ms / 1000).toFixed(2)} s = ` +
      `**${n(t.restore.recordsPerSec)} records/s** (ready ${(t.restore.readyMs / 1000).toFixed(1)} s after the process started; peak RSS ${mb(t.restore.peakRssBytes)}, JS heap at most ${mb(t.restore.memory.heapUsed)}).`,
    '',
    '### Broker round trips (outside the processor)',
    '',
    '| request | p50 | p99 | max |',
    '| --- | ---: | ---: | ---: |',
    `| produce, acks=all | ${ms(b.produceMs.p50)} | ${ms(b.produceMs.p99)} | ${ms(b.produceMs.max)} |`,
    `| back-to-back transaction, the processor's task producer (retry from 100 ms) | ${ms(b.transactionMs.p50)} | ${ms(b.transactionMs.p99)} | ${ms(b.transactionMs.max)} |`,
    `| the same, retry from 20 ms | ${ms(b.transactionFastRetryMs.p50)} | ${ms(b.transactionFastRetryMs.p99)} | ${ms(b.transactionFastRetryMs.max)} |`,
    '',
    `### Sweep interference (${n(s.keys)} keys, steady load ${n(s.rate)} events/s${s.rounds > 1 ? `, ${s.rounds} rounds in alternating order` : ''})`,
    '',
    `Latency: produce → commit of the events committed in the ${o.baselineSec} s before the sweep started (base), and of every event in flight at some point of the sweep. ` +
      'Gap: longest time without any event commit (in brackets: for the most-stalled task).',
    '',
    '| sweep | duration | p50 base → sweep | p99 base → sweep | p99 × | max during | longest gap base → sweep | events/s base → sweep | final state |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...s.results.map(
      (x) =>
        `| ${sweepLabel(x, s.rounds)} | ${(x.sweepMs / 1000).toFixed(1)} s | ${n(x.baseline.p50)} → ${n(x.during.p50)} ms | ` +
        `${n(x.baseline.p99)} → ${n(x.during.p99)} ms | ${x.p99Ratio.toFixed(2)} | ${n(x.during.max)} ms | ` +
        `${n(x.baselineGapMs)} (${n(x.baselineTaskGapMs)}) → ${n(x.longestGapMs)} (${n(x.longestTaskGapMs)}) ms | ` +
        `${n(x.eventsPerSecBaseline)} → ${n(x.eventsPerSecDuring)} | ${x.check.ok ? 'PASS' : 'FAIL'} |`,
    ),
    '',
    ...s.results.map(
      (x) =>
        `- ${sweepLabel(x, s.rounds)}: ${workLine(x.work)}; ${txLine(x.txBaseline, x.txDuring)}; CPU cores baseline → sweep: ${cpuLine(x.cpuBaseline, x.cpuDuring)}; processor peak RSS ${mb(x.peakRssBytes.processor)} (heap ${mb(x.processorMemory.heapUsed)})` +
        `${x.peakRssBytes.scanner ? `, scanner ${mb(x.peakRssBytes.scanner)}` : ''}; restored ${n(x.restore.records)} records in ${(x.restore.ms / 1000).toFixed(1)} s` +
        `${x.loadBehindMs > 50 ? `; the load generator fell ${n(x.loadBehindMs)} ms behind its schedule at worst` : ''}` +
        `${warningsLine(x.processorWarnings)}.`,
    ),
    '',
    `Final state: ${s.sameFinalState ? 'PASS' : 'FAIL'}: every deployment ends equal to the oracle ` +
      `(${n(s.results[0]!.check.expectedKeys)} keys, ${n(s.results[0]!.check.expectedDormant)} dormant after the sweep and ${n(s.loadTotal)} load events)` +
      `${s.results.length > 1 && new Set(s.results.map((x) => x.check.digest)).size === 1 ? `, and all ${s.results.length} final states are identical (state digest ${s.results[0]!.check.digest})` : ''}.` +
      s.results
        .filter((x) => !x.check.ok)
        .map(
          (x) => ` ${sweepLabel(x, s.rounds)}: ${x.check.mismatched} keys differ, e.g. ${x.check.examples.join('; ')}`,
        )
        .join(''),
    '',
    '![Event latency around each sweep](benchmarks/latency.svg)',
  );
  return lines.join('\n');
}

const START = '<!-- bench:results:start (written by `pnpm bench`; edit outside these markers) -->';
const END = '<!-- bench:results:end -->';

/** latest.json, latency.svg and the results block of docs/benchmarks.md (the prose around it is kept). */
export async function writeDocs(root: string, report: BenchReport, svg: string): Promise<void> {
  const dir = join(root, 'docs', 'benchmarks');
  mkdirSync(dir, { recursive: true });
  const jsonPath = join(dir, 'latest.json');
  writeFileSync(jsonPath, await formatted(root, jsonPath, `${JSON.stringify(report)}\n`));
  writeFileSync(join(dir, 'latency.svg'), `${svg}\n`);
  const mdPath = join(root, 'docs', 'benchmarks.md');
  const block = `${START}\n\n${resultsMarkdown(report)}\n\n${END}`;
  const md = existsSync(mdPath)
    ? readFileSync(mdPath, 'utf8')
    : `# Benchmarks\n\n## Latest results\n\n${START}\n${END}\n`;
  const from = md.indexOf(START.slice(0, 30));
  const to = md.indexOf(END);
  const next =
    from >= 0 && to > from
      ? `${md.slice(0, from)}${block}${md.slice(to + END.length)}`
      : `${md.trimEnd()}\n\n## Latest results\n\n${block}\n`;
  writeFileSync(mdPath, await formatted(root, mdPath, next));
}

/**
 * The text as the repository's prettier would write it (format:check stays clean), or as it
 * is when prettier is not installed: the root devDependency, not a dependency of the bench.
 */
async function formatted(root: string, path: string, text: string): Promise<string> {
  let prettier: { format(t: string, o: object): Promise<string>; resolveConfig(p: string): Promise<object | null> };
  try {
    prettier = require(join(root, 'node_modules', 'prettier')) as typeof prettier;
  } catch {
    return text;
  }
  return prettier.format(text, { ...((await prettier.resolveConfig(path)) ?? {}), filepath: path });
}

function whatIf(o: BenchOptions): string {
  const changes = Object.entries(o.processorEnv).map(([k, v]) => `${k}=${v}`);
  if (o.txRetryMs !== undefined) changes.push(`transactional producer retry from ${o.txRetryMs} ms (what-if)`);
  if (o.scannerNice > 0) changes.push(`scanner at nice ${o.scannerNice} (what-if)`);
  return changes.length
    ? ` **Processor settings changed for this run:** ${changes.join(', ')}.`
    : ' Processor at its default settings.';
}

function cores(c: CpuUse): string {
  return `${Object.values(c.cores)
    .map((v) => v.toFixed(2))
    .join(', ')} (${Math.round(c.machineBusy * 100)} %${pressure(c)})`;
}

function pressure(c: CpuUse): string {
  return c.pressure === undefined ? '' : `, CPU pressure ${Math.round(c.pressure * 100)} %`;
}

function cpuLine(a: CpuUse, b: CpuUse): string {
  const names = Object.keys(b.cores);
  const parts = names.map(
    (name) => `${name} ${(a.cores[name] ?? NaN).toFixed(2)} → ${(b.cores[name] ?? NaN).toFixed(2)}`,
  );
  const psi =
    a.pressure !== undefined && b.pressure !== undefined
      ? `; CPU pressure ${Math.round(a.pressure * 100)} % → ${Math.round(b.pressure * 100)} %`
      : '';
  return `${parts.join(', ')} (machine ${Math.round(a.machineBusy * 100)} % → ${Math.round(b.machineBusy * 100)} % busy${psi})`;
}

function txLine(a: TransactionSummary, b: TransactionSummary): string {
  const t = (x: TransactionSummary) => `${n(x.total.p50)}/${n(x.total.p99)}`;
  const step = (x: TransactionSummary) =>
    `send ${n(x.send.p50)}, offsets ${n(x.offsets.p50)}, commit ${n(x.commit.p50)}`;
  return (
    `transactions/s base → sweep ${a.perSec.toFixed(1)} → ${b.perSec.toFixed(1)}, ` +
    `transaction p50/p99 ${t(a)} → ${t(b)} ms (p50 of ${step(a)} → ${step(b)} ms)`
  );
}

function warningsLine(warnings: Record<string, number>): string {
  const entries = Object.entries(warnings);
  if (entries.length === 0) return '; the processor logged no warning';
  return `; processor warnings: ${entries.map(([msg, count]) => `${count}× "${msg}"`).join(', ')}`;
}

function workLine(work: Record<string, number>): string {
  return Object.entries(work)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k.replace(/_/g, ' ')} ${n(v)}`)
    .join(', ');
}

function n(v: number): string {
  return Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '–';
}

function ms(v: number): string {
  return Number.isFinite(v) ? `${v < 10 ? v.toFixed(1) : Math.round(v)} ms` : '–';
}

function lat(s: LatencySummary): string {
  return `${n(s.p50)} / ${n(s.p99)} / ${n(s.max)}`;
}

function mb(bytes: number | undefined): string {
  return bytes === undefined ? '–' : `${Math.round(bytes / 2 ** 20)} MB`;
}
