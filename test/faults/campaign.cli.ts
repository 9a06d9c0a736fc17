import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { writeDocsBlock } from '@state-relay/testkit';
import { runCampaign, type CampaignOptions, type RunRecord } from './campaign';
import { campaignMarkdown, campaignOutput, runLine, summaryLines } from './campaign-report';
import { ROOT, runMeta, writeJson } from './report';
import { faultsExactlyOnce, FaultStack } from './stack';

// `pnpm faults` (cli.js starts jest on this file with the options in STATE_RELAY_FAULTS_CLI):
// the campaign, a line per run, a summary, docs/faults/campaign.json and the results block of
// docs/faults.md (unless --no-docs). Fails if any run failed, naming each failed run's replay.

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
    `${options.runs} seeded runs: nothing lost, nothing doubled, nothing stuck`,
    async () => {
      const meta = runMeta(cli.command);
      say(
        `\n[campaign] ${cli.command}: ${options.runs} runs from seed ${options.seed}` +
          `${cli.parallel > 1 ? ` on ${cli.parallel} deployments side by side` : ''}` +
          `${cli.brokers === 3 ? ', each on a three-node cluster' : ''}; commit ${meta.commit.slice(0, 12)}`,
      );
      if (meta.uncommitted.length > 0)
        say(
          `[campaign] uncommitted changes in the code under test (services, packages, test/faults): ${meta.uncommitted.join('; ')}`,
        );
      // One after the other: each builds (or reuses) the images and starts its own broker.
      for (let i = 0; i < cli.parallel; i++) stacks.push(await FaultStack.start({ brokers: cli.brokers }));
      const json = path.join(ROOT, jsonFile);
      const done: RunRecord[] = [];
      const records: RunRecord[] = await runCampaign(
        stacks,
        options,
        (r) => {
          say(runLine(r, options.runs));
          done.push(r);
          // Written after every run, so a campaign cut short keeps what it found (complete: false).
          if (cli.docs)
            void writeJson(json, { meta, options, parallel: cli.parallel, complete: false, runs: done }).catch(
              () => undefined,
            );
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
      );
      meta.finishedAt = new Date().toISOString();
      for (const line of summaryLines(records)) say(line);
      if (cli.docs) {
        await writeJson(json, { meta, options, parallel: cli.parallel, complete: true, runs: records });
        writeDocsBlock(
          path.join(ROOT, 'docs/faults.md'),
          block,
          campaignMarkdown(records, options, meta, cli.parallel),
        );
        say(`[campaign] wrote ${jsonFile} and the ${block} block of docs/faults.md`);
      }
      const failed = records.filter((r) => !r.passed).map((r) => ({ seed: r.seed, replay: r.replay }));
      expect(failed).toEqual([]);
    },
    // Per run: 15 min on one broker; 40 on three (runs of 15–22 min were seen beside other work,
    // and the first 3-run campaign ran out of its 60 min in its second run, the images built first).
    Math.ceil(options.runs / cli.parallel) * (cli.brokers === 3 ? 2_400_000 : 900_000) + cli.parallel * 900_000,
  );
});
