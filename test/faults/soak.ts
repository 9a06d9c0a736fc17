import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { percentileOf } from '@state-relay/testkit';
import { waitCaughtUp } from '../../services/processor/test/harness';
import { inject, SCHEDULE_POOL, type FaultName } from './faults';
import { AS_OF, SteadyLoad } from './load';
import { waitRecovered } from './recovery';
import { deploy, type ScenarioContext } from './scenario';
import {
  addBuckets,
  bucketDelta,
  containerMiB,
  groupPosition,
  histogram,
  quantileOf,
  residentMiB,
  type Buckets,
} from './soak-metrics';
import type { FaultStack } from './stack';

// The soak (pnpm soak): one deployment under a steady load for many minutes, a sweep every
// minute (alternately marking the idle accounts dormant and waking them up again, so every
// sweep has the same work), a fault every few minutes, and samples of memory, event commit
// latency and rates. Memory must not grow: see memoryVerdict.

export interface SoakOptions {
  minutes: number;
  /** The event load asked for; the soak runs at what the machine holds if that is less (calibrate). */
  rate: number;
  keys: number;
  sweepEverySec: number;
  faultEverySec: number;
  seed: number;
}

/**
 * The soak's faults: the pool minus those that restart the processor or the scanner (a kill -9
 * resets the very memory the soak watches); freezes, partitions, a full disk, rebalances and
 * broker restarts leave processor-1 and the scanner the same processes throughout.
 */
export const SOAK_POOL: readonly FaultName[] = SCHEDULE_POOL.filter(
  (f) => !f.startsWith('kill-processor') && f !== 'kill-scanner' && f !== 'interrupted-rebuild',
);

export interface Sample {
  /** Seconds since the soak's measured phase began. */
  t: number;
  rssMiB: Record<string, number | null>;
  p50Ms: number | null;
  p99Ms: number | null;
  /** Events the load generator got acknowledged per second. */
  offeredPerSec: number;
  eventsPerSec: number;
  commandsPerSec: number;
  /** Events produced but not yet committed by the processor group. */
  lag: number;
}

export interface SweepRecord {
  id: string;
  kind: 'dormant' | 'wake';
  startT: number;
  endT?: number;
  matched?: number;
  applied?: number;
}

export interface SoakFault {
  fault: FaultName;
  t: number;
  recoveryMs?: number;
  error?: string;
}

export interface MemoryVerdict {
  process: string;
  secondQuarterMiB: number;
  lastQuarterMiB: number;
  ratio: number;
  grew: boolean;
}

export interface SoakResult {
  options: SoakOptions;
  calibration: { asked: number; offered: number; committed: number; held: boolean; rate: number };
  samples: Sample[];
  sweeps: SweepRecord[];
  faults: SoakFault[];
  memory: MemoryVerdict[];
  timeline: string[];
  error?: string;
}

/** Memory grew: the last quarter's median RSS above 1.25 × the second quarter's (the first quarter is warm-up). */
export const GROWTH_LIMIT = 1.25;

export function memoryVerdict(samples: Sample[], process: string): MemoryVerdict {
  const end = samples[samples.length - 1]?.t ?? 0;
  const inQuarter = (from: number, to: number) =>
    samples
      .filter((s) => s.t > end * from && s.t <= end * to)
      .flatMap((s) => (s.rssMiB[process] ? [s.rssMiB[process]!] : []));
  const secondQuarterMiB = percentileOf(inQuarter(0.25, 0.5), 50);
  const lastQuarterMiB = percentileOf(inQuarter(0.75, 1), 50);
  const ratio = lastQuarterMiB / secondQuarterMiB;
  return { process, secondQuarterMiB, lastQuarterMiB, ratio, grew: !(ratio <= GROWTH_LIMIT) };
}

const WAKE_UP = { condition: { field: 'status', op: 'eq', value: 'dormant' }, action: { set: { status: 'active' } } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SAMPLE_MS = 10_000;

/** The soak's clock: its deadline, and a halt that ends every loop early (one of them failed). */
class Clock {
  private readonly halt = new AbortController();
  readonly t0 = Date.now();
  constructor(readonly deadline: number) {}
  /** Seconds since the measured phase began. */
  t(): number {
    return Math.round((Date.now() - this.t0) / 1000);
  }
  get running(): boolean {
    return Date.now() < this.deadline && !this.halt.signal.aborted;
  }
  stop(): void {
    this.halt.abort();
  }
  /** Sleeps until `until` (at most the deadline), or the halt. */
  async until(until: number): Promise<void> {
    const ms = Math.min(until, this.deadline) - Date.now();
    if (ms <= 0 || this.halt.signal.aborted) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.halt.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}

export async function runSoak(stack: FaultStack, o: SoakOptions, say: (line: string) => void): Promise<SoakResult> {
  const started = Date.now();
  const timeline: string[] = [];
  const note = (what: string) => {
    timeline.push(`${((Date.now() - started) / 1000).toFixed(1)}s ${what}`);
    say(`[soak] ${timeline[timeline.length - 1]}`);
  };
  const ctx = await deploy(stack, { seed: o.seed, accounts: o.keys, note });
  const result: SoakResult = {
    options: o,
    calibration: await calibrate(ctx, o, note),
    samples: [],
    sweeps: [],
    faults: [],
    memory: [],
    timeline,
  };
  const load = ctx.load!;
  const clock = new Clock(Date.now() + o.minutes * 60_000);
  const watched = ['processor-1', 'scanner'];
  const loop = (body: Promise<void>) =>
    body.catch((err) => {
      clock.stop();
      throw err;
    });
  try {
    const ended = await Promise.allSettled([
      loop(sampleUntil(ctx, clock, result.samples)),
      loop(sweepUntil(ctx, o, clock, result.sweeps, note)),
      loop(faultUntil(ctx, o, clock, result.faults, note)),
    ]);
    for (const e of ended) if (e.status === 'rejected') throw e.reason;
    // The last sweep completes, the processor catches up.
    const last = result.sweeps[result.sweeps.length - 1];
    if (last && last.endT === undefined) await finishSweep(ctx, last, clock, Date.now() + 300_000, false);
    if (last && last.endT === undefined) throw new Error(`the last sweep (${last.id}) did not complete in 300 s`);
    await load.stop();
    note(`load stopped after ${load.produced} events (${load.failedSends} failed sends)`);
    await waitCaughtUp(ctx.kafka, ctx.d.appId, ctx.d.eventsTopic, 300_000);
    await waitCaughtUp(ctx.kafka, ctx.d.appId, ctx.d.commandsTopic, 300_000);
    note('processor caught up');
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
    note(`soak failed: ${result.error.split('\n')[0]}`);
    await load.stop();
  }
  result.memory = watched.map((p) => memoryVerdict(result.samples, p));
  return result;
}

/**
 * Offers the asked rate for 45 s and watches the processor group: if it commits less than 95%
 * of what is offered, or the load generator cannot offer 95% of it, the soak runs at 80% of the
 * committed rate instead (rounded to 100 events/s), from a fresh load once the backlog is gone.
 */
async function calibrate(
  ctx: ScenarioContext,
  o: SoakOptions,
  note: (what: string) => void,
): Promise<SoakResult['calibration']> {
  const start = (rate: number, seed: number) =>
    new SteadyLoad(ctx.kafka, ctx.d.eventsTopic, ctx.seeded.others, {
      seed,
      perSecond: rate,
      // 20 sends a second over 8 producers: a send takes a round trip, which a busy machine makes long.
      batch: Math.max(10, Math.round(rate / 20)),
      producers: 8,
      signUps: false,
      rememberIds: false,
    });
  let load = start(o.rate, o.seed);
  await load.start();
  await sleep(15_000); // warm-up
  const admin = ctx.kafka.admin();
  await admin.connect();
  const before = { at: Date.now(), produced: load.produced, ...(await groupPosition(ctx, admin, ctx.d.eventsTopic)) };
  await sleep(45_000);
  const after = { at: Date.now(), produced: load.produced, ...(await groupPosition(ctx, admin, ctx.d.eventsTopic)) };
  await admin.disconnect();
  const secs = (after.at - before.at) / 1000;
  const offered = Math.round((after.produced - before.produced) / secs);
  const committed = Math.round((after.committed - before.committed) / secs);
  const held = offered >= 0.95 * o.rate && committed >= 0.95 * offered;
  let rate = o.rate;
  if (!held) {
    rate = Math.max(100, Math.floor((0.8 * Math.min(offered, committed)) / 100) * 100);
    await load.stop();
    await waitCaughtUp(ctx.kafka, ctx.d.appId, ctx.d.eventsTopic, 600_000);
    load = start(rate, o.seed + 1);
    await load.start();
  }
  note(
    `asked for ${o.rate} events/s: the load generator offered ${offered}, the processor committed ${committed} events/s → ` +
      (held
        ? `the machine holds it; soaking at ${rate} events/s`
        : `${offered < 0.95 * o.rate ? 'the generator (on the same cores) fell short' : 'the processor fell behind'}; ` +
          `soaking at ${rate} events/s (80% of the lower of the two)`),
  );
  ctx.load = load;
  return { asked: o.rate, offered, committed, held, rate };
}

async function sampleUntil(ctx: ScenarioContext, clock: Clock, samples: Sample[]): Promise<void> {
  const admin = ctx.kafka.admin();
  await admin.connect();
  const histograms = new Map<string, Buckets>();
  let last = {
    at: Date.now(),
    produced: ctx.load!.produced,
    events: await groupPosition(ctx, admin, ctx.d.eventsTopic),
    commands: await groupPosition(ctx, admin, ctx.d.commandsTopic),
  };
  try {
    while (clock.running) {
      await clock.until(Date.now() + SAMPLE_MS);
      const nodes = [...ctx.processors, ctx.scanner];
      const rssMiB: Record<string, number | null> = {};
      const window: Buckets = new Map();
      for (const node of nodes) {
        rssMiB[node.name] = await residentMiB(node);
        if (node.service !== 'processor') continue;
        const text = await node.metrics().catch(() => undefined);
        if (text === undefined) continue; // frozen or cut off: its commits show up in a later window
        const now = histogram(text, 'processor_event_commit_latency_seconds');
        addBuckets(window, bucketDelta(now, histograms.get(node.id)));
        histograms.set(node.id, now);
      }
      rssMiB.broker = await containerMiB(ctx.stack.kafka.container.getId());
      const now = {
        at: Date.now(),
        produced: ctx.load!.produced,
        events: await groupPosition(ctx, admin, ctx.d.eventsTopic).catch(() => last.events),
        commands: await groupPosition(ctx, admin, ctx.d.commandsTopic).catch(() => last.commands),
      };
      const secs = (now.at - last.at) / 1000;
      const ms = (q: number) => {
        const s = quantileOf(window, q);
        return s === null ? null : Math.round(s * 1000);
      };
      samples.push({
        t: clock.t(),
        rssMiB,
        p50Ms: ms(0.5),
        p99Ms: ms(0.99),
        offeredPerSec: Math.round((now.produced - last.produced) / secs),
        eventsPerSec: Math.round((now.events.committed - last.events.committed) / secs),
        commandsPerSec: Math.round((now.commands.committed - last.commands.committed) / secs),
        lag: now.events.end - now.events.committed,
      });
      last = now;
    }
  } finally {
    await admin.disconnect();
  }
}

async function sweepUntil(
  ctx: ScenarioContext,
  o: SoakOptions,
  clock: Clock,
  sweeps: SweepRecord[],
  note: (what: string) => void,
): Promise<void> {
  while (clock.running) {
    const kind = sweeps.length % 2 === 0 ? 'dormant' : 'wake';
    const rule = kind === 'dormant' ? DORMANCY_SWEEP : WAKE_UP;
    // A fault may cut the scanner off mid-request: each sweep's asOf (1 ms apart, the same days)
    // marks its scan, so a create whose answer was lost is found instead of queued twice.
    const asOf = AS_OF + sweeps.length;
    const scan = await ctx.api.createDuringFaults({ ...rule, asOf, options: { rate: 1_000, batchSize: 100 } });
    const sweep: SweepRecord = { id: scan.id, kind, startT: clock.t() };
    sweeps.push(sweep);
    ctx.scanId = scan.id;
    note(`sweep ${sweeps.length} (${kind}) created`);
    const next = Date.now() + o.sweepEverySec * 1000;
    await finishSweep(ctx, sweep, clock, clock.deadline);
    // Every sweep must change exactly the swept accounts: the load never touches them.
    if (sweep.endT !== undefined && (sweep.matched !== ctx.seeded.matching.length || sweep.applied !== sweep.matched))
      throw new Error(
        `sweep ${sweep.id} (${kind}) matched ${sweep.matched} and applied ${sweep.applied} of ${ctx.seeded.matching.length}`,
      );
    if (sweep.endT !== undefined) note(`sweep ${sweeps.length} completed in ${sweep.endT - sweep.startT} s`);
    await clock.until(next);
  }
}

/**
 * Waits for the sweep to complete, until `until` (epoch ms); in short waits, so a halted soak
 * (`whileRunning`) stops waiting at once. Records its end and counts.
 */
async function finishSweep(
  ctx: ScenarioContext,
  sweep: SweepRecord,
  clock: Clock,
  until: number,
  whileRunning = true,
): Promise<void> {
  for (;;) {
    if (whileRunning && !clock.running) return;
    const left = until - Date.now();
    if (left <= 0) return;
    const done = await ctx.api
      .waitFor(sweep.id, (s) => s.status === 'completed', `sweep ${sweep.id} to complete`, Math.min(10_000, left))
      .catch((err: Error) => {
        if (/timed out/.test(err.message)) return undefined;
        throw err;
      });
    if (done) {
      sweep.endT = clock.t();
      sweep.matched = done.counts.matched;
      sweep.applied = done.counts.results.applied ?? 0;
      return;
    }
  }
}

async function faultUntil(
  ctx: ScenarioContext,
  o: SoakOptions,
  clock: Clock,
  faults: SoakFault[],
  note: (what: string) => void,
): Promise<void> {
  for (;;) {
    const at = Date.now() + o.faultEverySec * 1000;
    // A fault needs room to recover before the end.
    if (at + 120_000 > clock.deadline) return;
    await clock.until(at);
    if (!clock.running) return;
    const fault = SOAK_POOL[Math.floor(ctx.random() * SOAK_POOL.length)]!;
    const record: SoakFault = { fault, t: clock.t() };
    faults.push(record);
    note(`injecting ${fault}`);
    const since = Date.now();
    try {
      await inject(ctx, fault);
      record.recoveryMs = await waitRecovered(ctx, since);
      note(`${fault} recovered ${record.recoveryMs} ms after its first action`);
    } catch (err) {
      record.error = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }
}
