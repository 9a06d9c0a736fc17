import path from 'node:path';
import { runCampaign, type CampaignOptions, type RunRecord } from './campaign';
import { runLine, summaryLines } from './campaign-report';
import { ROOT, writeJson } from './report';
import { FaultStack } from './stack';

// A small fault campaign on every CI run (bash scripts/test.sh): three seeded runs of two
// faults each, drawn from the whole pool, injected during the sweep under load, each with its
// recovery time. The figures go to .state-relay/faults/campaign-ci.json; the docs carry the
// long campaign (pnpm faults). FAULT_SEED replays the three runs.

const options: CampaignOptions = {
  runs: 3,
  seed: Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31)),
  keys: 1_000,
  rate: 'auto',
  loadPerSecond: 60,
  faultsPerRun: [2, 2],
};

describe('a fault campaign (containers)', () => {
  let stack: FaultStack;
  beforeAll(async () => {
    stack = await FaultStack.start();
  }, 900_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('three seeded runs of random faults during a sweep: nothing lost, doubled or stuck, every fault recovered', async () => {
    const records: RunRecord[] = await runCampaign([stack], options, (r) =>
      process.stdout.write(`\n${runLine(r, options.runs)}\n`),
    );
    process.stdout.write(`\n${summaryLines(records).join('\n')}\n`);
    await writeJson(path.join(ROOT, '.state-relay/faults/campaign-ci.json'), { options, runs: records });
    expect(
      records.map((r) => ({
        seed: r.seed,
        passed: r.passed,
        lost: r.lost,
        doubled: r.doubled,
        stuck: r.stuck,
        recovered: r.faults.length,
        ...(r.passed ? {} : { replay: r.replay, error: r.error }),
      })),
    ).toEqual(
      records.map((r) => ({
        seed: r.seed,
        passed: true,
        lost: 0,
        doubled: 0,
        stuck: 0,
        recovered: r.schedule.length,
      })),
    );
  }, 900_000);
});
