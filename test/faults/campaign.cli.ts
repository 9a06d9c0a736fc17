import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { writeDocsBlock } from '@state-relay/testkit';
import { runCampaign, type CampaignOptions, type RunRecord } from './campaign';
import {
  campaignMarkdown,
  campaignOutput,
  resumeMismatches,
  runLine,
  runsToDo,
  summaryLines,
  type CampaignChunk,
  type CampaignFile,
} from './campaign-report';
import { ROOT, runMeta, writeJson } from './report';
import { faultsExactlyOnce, FaultStack } from './stack';

// `pnpm faults` (cli.js starts jest on this file with the options in STATE_RELAY_FAULTS_CLI):
// the campaign, a line per run, a summary, docs/faults/campaign.json and the results block of
// docs/faults.md (unless --no-docs). Fails if any run failed, naming each failed run's replay.
// `--resume` adds to the campaign in the file (same options), doing the runs it lacks, at most
// `--chunk N` of them: a campaign longer than a working session goes in chunks, each chunk's
// command and commit recorded.

const cli = JSON.parse(process.env.STATE_RELAY_FAULTS_CLI ?? 'null') as {
  runs: number;
  seed: number;
  keys: number;
  rate: number | 'auto';
  load: number;
  faults: [number, number];
  parallel: number;
  brokers: 1 | 3;
  docs: boolean;
  resume: boolean;
  chunk: number | null;
  command: string;
} | null;
if (!cli) throw new Error('run through `pnpm faults` (test/faults/cli.js), which passes the options');

const options: CampaignOptions = {
  runs: cli.runs,
  seed: cli.seed,
  keys: cli.keys,
  rate: cli.rate,
  loadPerSecond: cli.load,
  faultsPerRun: cli.faults,
  exactlyOnce: faultsExactlyOnce(),
  brokers: cli.brokers,
};
// A three-broker campaign has its own file and docs block: the single-broker one stays as it is.
const { file: jsonFile, block } = campaignOutput(cli.brokers);
const say = (line: string) => process.stdout.write(`${line}\n`);

describe('fault campaign', () => {
  const stacks: FaultStack[] = [];
  // Stopping a deployment removes its containers, network and broker: more than jest's 5 s.
  afterAll(async () => {
    await Promise.all(stacks.map((s) => s.stop()));
  }, 600_000);

  it(
    `${options.runs} seeded runs${cli.resume ? ' (resumed)' : ''}: nothing lost, nothing doubled, nothing stuck`,
    async () => {
      const meta = runMeta(cli.command);
      const json = path.join(ROOT, jsonFile);
      const before = cli.resume ? await previousCampaign(json) : undefined;
      const earlier: RunRecord[] = before?.runs ?? [];
      const todo = runsToDo(options.runs, earlier, cli.chunk ?? Infinity);
      const chunks: CampaignChunk[] = before
        ? (before.chunks ?? [{ ...before.meta, runs: earlier.map((r) => r.run) }])
        : [];
      const chunk: CampaignChunk = { ...meta, runs: [] };
      say(
        `\n[campaign] ${cli.command}: ${todo.length} of ${options.runs} runs from seed ${options.seed}` +
          (before ? ` (${earlier.length} ended before, in ${chunks.length} chunk(s))` : '') +
          `${cli.parallel > 1 ? ` on ${cli.parallel} deployments side by side` : ''}` +
          `${cli.brokers === 3 ? ', each on a three-node cluster' : ''}; commit ${meta.commit.slice(0, 12)}`,
      );
      if (meta.uncommitted.length > 0)
        say(
          `[campaign] uncommitted changes in the code under test (services, packages, test/faults): ${meta.uncommitted.join('; ')}`,
        );
      if (todo.length === 0) {
        say(`[campaign] every run of ${jsonFile} has ended: nothing to resume`);
        return;
      }
      const write = (records: RunRecord[], finished: boolean) => {
        const all = [...earlier, ...records].sort((a, b) => a.run - b.run);
        const file: CampaignFile = {
          meta: before?.meta ?? meta,
          options,
          parallel: cli.parallel,
          complete: finished && all.length === options.runs,
          chunks: [...chunks, { ...chunk, runs: records.map((r) => r.run) }],
          runs: all,
        };
        return file;
      };
      // One after the other: each builds (or reuses) the images and starts its own broker.
      for (let i = 0; i < cli.parallel; i++) stacks.push(await FaultStack.start({ brokers: cli.brokers }));
      const done: RunRecord[] = [];
      // One write at a time: an after-run write still running when the last one starts once left
      // the file with the end of one write after the other (chunk 3 of the three-broker campaign).
      let saving = Promise.resolve();
      const records: RunRecord[] = await runCampaign(
        stacks,
        options,
        (r) => {
          say(runLine(r, options.runs));
          done.push(r);
          // Written after every run, so a campaign cut short keeps what it found (complete: false).
          if (cli.docs) saving = saving.then(() => writeJson(json, write(done, false))).catch(() => undefined);
        },
        async (broken) => {
          const file = path.join(ROOT, '.state-relay', 'fault-logs', `broker-${Date.now()}.log`);
          await mkdir(path.dirname(file), { recursive: true });
          await writeFile(file, await broken.brokerPostMortem());
          say(
            `[campaign] the failed run left its deployment without a broker (its state and log: ${path.relative(ROOT, file)}); the next runs get a new one`,
          );
          await broken.stop();
          return FaultStack.start({ brokers: cli.brokers });
        },
        todo,
      );
      meta.finishedAt = new Date().toISOString();
      chunk.finishedAt = meta.finishedAt;
      const file = write(records, true);
      for (const line of summaryLines(file.runs)) say(line);
      if (cli.docs) {
        await saving;
        await writeJson(json, file);
        writeDocsBlock(
          path.join(ROOT, 'docs/faults.md'),
          block,
          campaignMarkdown(file.runs, options, file.meta, cli.parallel, file.complete, file.chunks),
        );
        say(`[campaign] wrote ${jsonFile} and the ${block} block of docs/faults.md`);
      }
      const failed = records.filter((r) => !r.passed).map((r) => ({ seed: r.seed, replay: r.replay }));
      expect(failed).toEqual([]);
    },
    // Per run: 15 min on one broker; 40 on three (runs of 15–22 min were seen beside other work,
    // and the first 3-run campaign ran out of its 60 min in its second run, the images built first).
    Math.ceil(Math.min(options.runs, cli.chunk ?? Infinity) / cli.parallel) *
      (cli.brokers === 3 ? 2_400_000 : 900_000) +
      cli.parallel * 900_000,
  );
});

/** The campaign --resume adds to: it must exist and have been made with the same options. */
async function previousCampaign(json: string): Promise<CampaignFile> {
  const text = await readFile(json, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new Error(`--resume: no campaign to resume in ${path.relative(ROOT, json)} (${err.code ?? err.message})`);
  });
  const file = JSON.parse(text) as CampaignFile;
  const wrong = resumeMismatches(file.options, options);
  if (wrong.length > 0)
    throw new Error(`--resume: ${path.relative(ROOT, json)} is another campaign; ${wrong.join('; ')}`);
  return file;
}
