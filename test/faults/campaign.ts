import { inject, schedulePool, type FaultName } from './faults';
import { prng } from './load';
import { waitRecovered } from './recovery';
import { runScenario, type ScenarioContext } from './scenario';
import type { BrokerCount, FaultStack } from './stack';
import { tally, type Tally } from './tally';

// The fault campaign (pnpm faults): many seeded runs, each a scenario of test/faults with a
// random schedule of faults injected during the sweep under load, each followed by its
// recovery time; per run, the figures of tally.ts and whether every check of the scenario held.

export interface CampaignOptions {
  runs: number;
  /** Run i uses seed + i: a run is replayed with --runs 1 --seed <its seed>. */
  seed: number;
  /** Accounts seeded per run (30% are swept). */
  keys: number;
  /** The sweep's command rate (commands/s); 'auto': about 30 s of walk per fault drawn (autoRate). */
  rate: number | 'auto';
  /** Steady event load (events/s). */
  loadPerSecond: number;
  /** Faults per run, inclusive bounds. */
  faultsPerRun: readonly [number, number];
  /** The processors' EXACTLY_ONCE (absent in campaigns recorded before it was an option: v1). */
  exactlyOnce?: 'v1' | 'v2';
  /** Brokers per deployment: one, or a three-node cluster with its own faults (absent before it was an option: 1). */
  brokers?: BrokerCount;
}

export interface FaultRecord {
  fault: FaultName;
  /** Commands emitted when it was injected, and the scan's status then. */
  atEmitted: number;
  scanStatus: string;
  /** From its first action until the fault's own steps ended (the system whole again). */
  faultMs: number;
  /** From its first action until the system was whole and moving again (recovery.ts). */
  recoveryMs: number;
}

export interface RunRecord extends Partial<Tally> {
  /** Why the figures are missing (e.g. the broker did not come back). */
  tallyError?: string;
  run: number;
  seed: number;
  schedule: FaultName[];
  /** The faults that ran to their end and recovered, in order. */
  faults: FaultRecord[];
  matched: number | null;
  /** The sweep's command rate this run used. */
  rate: number;
  passed: boolean;
  /** The first failed check or step, as the scenario reported it (timeline and logs included). */
  error?: string;
  /** Where the failed run's full service logs are. */
  logs?: string;
  ms: number;
  replay: string;
}

/** From the pool of every fault the suite knows for `brokers` brokers; 2–5 of them per run by default. */
export function drawSchedule(
  seed: number,
  [min, max]: readonly [number, number],
  brokers: BrokerCount = 1,
): FaultName[] {
  const pool = schedulePool(brokers);
  const random = prng(seed ^ 0xfa17);
  const count = min + Math.floor(random() * (max - min + 1));
  return Array.from({ length: count }, () => pool[Math.floor(random() * pool.length)]!);
}

/** A walk long enough that the faults fall into it: about 30 s per fault for the 30% of keys swept. */
export function autoRate(keys: number, faults: number): number {
  return Math.max(2, Math.round((0.3 * keys) / (30 * faults)));
}

export function replayCommand(seed: number, o: CampaignOptions): string {
  return (
    `pnpm faults --runs 1 --seed ${seed} --keys ${o.keys} --rate ${o.rate} --load ${o.loadPerSecond} --faults ${o.faultsPerRun.join('-')}` +
    (o.brokers === 3 ? ' --brokers 3' : '')
  );
}

/**
 * Runs the campaign, one run at a time on each of `stacks` (each its own broker and network):
 * a stack takes the next run when its last one ended, so runs that mostly wait (a session
 * expiry, a freeze) overlap. Reports each run as it ends; returns them in run order. `runs`
 * (the run numbers to do, all of 0..o.runs-1 by default) lets a long campaign go in chunks.
 */
export async function runCampaign(
  stacks: FaultStack[],
  o: CampaignOptions,
  onRun: (r: RunRecord) => void,
  replaceStack?: (broken: FaultStack) => Promise<FaultStack>,
  runs: readonly number[] = Array.from({ length: o.runs }, (_, i) => i),
): Promise<RunRecord[]> {
  const records: RunRecord[] = [];
  let next = 0;
  await Promise.all(
    stacks.map(async (_, slot) => {
      for (let i = next++; i < runs.length; i = next++) {
        const record = await runOne(stacks[slot]!, o, runs[i]!);
        records.push(record);
        onRun(record);
        // A failed run can leave its deployment without a broker (one that did not come back
        // from a fault): the run counts as failed, and the next runs get a new deployment
        // instead of failing on the dead one.
        if (!record.passed && replaceStack && !(await stacks[slot]!.brokerAnswers()))
          stacks[slot] = await replaceStack(stacks[slot]!);
      }
    }),
  );
  return records.sort((a, b) => a.run - b.run);
}

async function runOne(stack: FaultStack, o: CampaignOptions, run: number): Promise<RunRecord> {
  const seed = o.seed + run;
  const schedule = drawSchedule(seed, o.faultsPerRun, o.brokers ?? 1);
  const rate = o.rate === 'auto' ? autoRate(o.keys, schedule.length) : o.rate;
  const faults: FaultRecord[] = [];
  const started = Date.now();
  let ctx: ScenarioContext | undefined;
  let error: string | undefined;
  try {
    await runScenario(stack, {
      seed,
      accounts: o.keys,
      rate,
      loadPerSecond: o.loadPerSecond,
      faults: async (c) => {
        ctx = c;
        c.note(`schedule: ${schedule.join(', ')}`);
        for (const [i, fault] of schedule.entries()) {
          // Spread over the walk; a fault that outlasts it hits a completed scan, which the record says.
          const at = await c.emitted((i + 0.5) / (schedule.length + 1));
          c.note(`injecting ${fault} at ${at.counts.emitted}/${c.seeded.matching.length} emitted (${at.status})`);
          const since = Date.now();
          await inject(c, fault);
          const faultMs = Date.now() - since;
          const recoveryMs = await waitRecovered(c, since).catch((err: Error) => {
            throw new Error(`stuck after ${fault}: ${err.message}`);
          });
          c.note(`${fault} recovered ${recoveryMs} ms after its first action`);
          faults.push({ fault, atEmitted: at.counts.emitted, scanStatus: at.status, faultMs, recoveryMs });
        }
      },
    });
  } catch (err) {
    error = describeError(err);
  }
  // Once more on failure: a read of a long topic (an interrupted rebuild's 150,000 accounts) can
  // run past its bound on a loaded machine, and a run without figures counts for nothing.
  const counts: Partial<Tally> & { tallyError?: string } = ctx
    ? await tally(ctx)
        .catch(() => tally(ctx!))
        .catch((err: Error) => ({ tallyError: err.message }))
    : {};
  await stack.clear();
  const wrong = (counts.lost ?? 0) + (counts.doubled ?? 0) + (counts.stuck ?? 0);
  // The checks and the tally count the same things two ways: they must agree.
  if (error === undefined && wrong > 0) error = `every check passed, yet the tally counts ${JSON.stringify(counts)}`;
  return {
    run,
    seed,
    schedule,
    faults,
    ...counts,
    matched: ctx?.seeded.matching.length ?? null,
    rate,
    passed: error === undefined,
    ...(error === undefined ? {} : { error }),
    ...(error !== undefined && ctx ? { logs: `.state-relay/fault-logs/${ctx.d.appId}/` } : {}),
    ms: Date.now() - started,
    replay: replayCommand(seed, o),
  };
}

/**
 * A run's first error: the message (the scenario's carries its timeline and logs); a one-line
 * message (a client's "Connection timeout") gets its type and where it was thrown, or a failed run
 * would not say which step failed.
 */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.message.includes('\n')) return err.message;
  const frames = (err.stack ?? '')
    .split('\n')
    .filter((l) => l.trimStart().startsWith('at '))
    .slice(0, 6)
    .map((l) => `  ${l.trim()}`);
  return [`${err.name}: ${err.message}`, ...frames].join('\n');
}
