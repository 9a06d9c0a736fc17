import type { LoadChildConfig } from './children/load-child';
import type { SweepCommand } from './children/processor-child';
import { AS_OF, log } from './common';
import { brokerPid, cpuBetween, snapshot } from './cpu';
import {
  createDeploymentTopics,
  newDeployment,
  produceAll,
  recordCount,
  waitCommittedToEnd,
  writtenEvents,
  type Deployment,
} from './deployment';
import { Child } from './ipc';
import {
  budgetLabel,
  DEFAULT_BUDGET,
  parseBudget,
  summarizePace,
  summarizeSignal,
  cutFraction,
  type LatencyBudget,
  type PaceSample,
  type SignalSample,
} from './latency-budget';
import {
  accountsOracle,
  DORMANCY_SWEEP,
  evaluateCondition,
  generateAccountEvents,
  type Admin,
  type JsonObject,
  type Kafka,
  type Message,
} from './lib';
import type { BenchOptions } from './options';
import { ProcessorRun } from './processor-run';
import { ScannerProcess } from './scanner-run';
import { encodeFreshEntity } from './stored-entity';
import type { SteadyLoadSpec } from './steady-load';
import { summarizePhase, type RelayPlan, type SweepMode, type SweepResult } from './sweep-result';
import { randomBytes } from 'node:crypto';
import { foldedState, loadedState, sweptState } from './sweep-oracle';
import { checkState, readStores } from './verify';

export { MODE_LABELS, SWEEP_MODES, sweepLabel, type RelayPlan, type SweepMode, type SweepResult } from './sweep-result';

export interface SweepComparison {
  keys: number;
  candidates: number;
  rate: number;
  chunkKeys: number;
  relayRate: number;
  /** The relay's latency budget: `default (1.2x)` (the scan sets none), or what --relay-budget set. */
  relayBudget: string;
  rounds: number;
  /** Steady-load events every deployment got (measured part plus the top-up). */
  loadTotal: number;
  results: SweepResult[];
  /** Every mode ended in the oracle's state, and (same input) in the same state. */
  sameFinalState: boolean;
}

/**
 * Runs alongside a phase's sweep, from the moment the sweep is started (part 5 kills a broker
 * there); the phase's tail begins once both the sweep and this have ended.
 */
export type DuringSweep = (proc: ProcessorRun, d: Deployment) => Promise<void>;

/** What the phases of a comparison share: the seed, the steady load, the total every deployment gets. */
export interface Shared {
  duringSweep?: DuringSweep;
  kafka: Kafka;
  admin: Admin;
  brokers: string[];
  o: BenchOptions;
  workDir: string;
  seed: Map<string, JsonObject>;
  seedMessages: Message[];
  loadSpec: SteadyLoadSpec;
  loadTotal: number;
  /** Dormant-eligible keys of the seed: the commands a whole sweep emits, about. */
  candidates: number;
}

/**
 * Part 2: the same sweep (mark dormant) three ways, one after another, each on its own
 * deployment loaded with the identical state (the changelog is seeded with it and the
 * processor restores it) and fed the identical steady load, so each sweep has the same work
 * and all three must end in the same state. See docs/benchmarks.md for the method.
 */
export async function compareSweeps(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  o: BenchOptions,
  workDir: string,
  duringSweep?: DuringSweep,
): Promise<SweepComparison> {
  const shared = prepareSweeps(kafka, admin, brokers, o, workDir, o.sweepAllowanceSec, duringSweep);
  const relay = mainRelayPlan(o);
  const results: SweepResult[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    const order = round % 2 === 1 ? o.sweeps : [...o.sweeps].reverse();
    for (const mode of order) results.push(await runPhase(mode, round, shared, mode === 'relay' ? relay : undefined));
  }
  return {
    keys: o.keys,
    candidates: shared.candidates,
    rate: o.rate,
    chunkKeys: o.chunkKeys,
    relayRate: o.relayRate,
    relayBudget: relay.budgetLabel,
    rounds: o.rounds,
    loadTotal: shared.loadTotal,
    results,
    sameFinalState: sameFinalState(results, shared.loadTotal),
  };
}

/**
 * The relay of the three-way comparison: capped at --relay-rate, pausing above --relay-max-lag,
 * paced by the latency budget --relay-budget (unset: the scan sets none, so the scanner's default
 * SCAN_LATENCY_BUDGET, 1.2x, applies, as for an operator's scan).
 */
export function mainRelayPlan(o: BenchOptions): RelayPlan {
  const budget = o.relayBudget === undefined ? undefined : parseBudget(o.relayBudget);
  return {
    rate: o.relayRate,
    maxLag: o.relayMaxLag,
    ...(budget ? { budget } : {}),
    budgetLabel: budget ? budgetLabel(budget) : `default (${DEFAULT_BUDGET})`,
  };
}

/** Every mode ended in the oracle's state and, with the same input, in the same state. */
export function sameFinalState(results: SweepResult[], loadTotal: number): boolean {
  // A sweep cut part-way (part 6) ends in its own state, checked key by key; it is left out of the digests.
  const whole = results.filter((r) => !r.truncated);
  const sameInput = whole.every((r) => r.loadEvents === loadTotal);
  return results.every((r) => r.check.ok) && (!sameInput || new Set(whole.map((r) => r.check.digest)).size <= 1);
}

/**
 * The seeded state and the steady load every phase of a comparison gets; `allowanceSec` is the
 * sweep time budgeted in the fixed load total (a longer sweep gets more load and is then checked
 * against the oracle alone).
 */
export function prepareSweeps(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  o: BenchOptions,
  workDir: string,
  allowanceSec: number,
  duringSweep?: DuringSweep,
): Shared {
  log(`sweeps: generating ${o.keys} accounts`);
  const seed = accountsOracle(
    generateAccountEvents({ accounts: o.keys, eventsPerAccount: 2, seed: 7, now: AS_OF, dormantFraction: 0.3 }),
  );
  const seedMessages: Message[] = [...seed].map(([key, value]) => ({
    key,
    value: encodeFreshEntity(1, value),
  }));
  const candidates = [...seed.values()].filter((v) =>
    evaluateCondition(DORMANCY_SWEEP.condition, v, { asOf: AS_OF }),
  ).length;
  // Every deployment gets this many steady-load events: those sent while measuring, then the
  // rest of the same sequence at full speed, so the final states must be identical.
  const loadTotal = Math.ceil(o.rate * (o.warmupSec + o.baselineSec + allowanceSec + o.tailSec));
  return {
    ...(duringSweep ? { duringSweep } : {}),
    kafka,
    admin,
    brokers,
    o,
    workDir,
    seed,
    seedMessages,
    loadSpec: { seed: 11, keys: o.keys, asOf: AS_OF },
    loadTotal,
    candidates,
  };
}

/**
 * One phase: a fresh deployment seeded with the state, the steady load, a baseline, the sweep, a
 * tail, the final state checked. A relay phase runs the scanner as `relay` says (required then);
 * its processor serves GET /status, which the scanner reads for its latency-budget pacer.
 */
export async function runPhase(mode: SweepMode, round: number, s: Shared, relay?: RelayPlan): Promise<SweepResult> {
  const { kafka, admin, brokers, o } = s;
  if (mode === 'relay' && !relay) throw new Error('a relay phase needs its RelayPlan');
  const tag = relay?.tag ?? '';
  const d = newDeployment(`${mode}${tag ? `-${tag}` : ''}${round}`, o.partitions, s.workDir, o.topicReplication);
  const name = `${mode}${tag ? ` ${relay!.budgetLabel}` : ''}${o.rounds > 1 ? ` (round ${round})` : ''}`;
  await createDeploymentTopics(admin, d);
  log(`sweep ${name}: seeding ${s.seedMessages.length} entities into ${d.changelogTopic}`);
  await produceAll(kafka, d.changelogTopic, s.seedMessages);

  const statusToken = randomBytes(16).toString('hex');
  const proc = new ProcessorRun(brokers, d, { ...o, eventLatencies: true, statusToken });
  let scanner: ScannerProcess | undefined;
  let load: Child | undefined;
  try {
    await proc.ready();
    log(`sweep ${name}: processor restored ${proc.restored.records} records in ${proc.restored.ms} ms`);
    if (mode === 'relay') {
      if (proc.statusUrl === undefined) throw new Error('the processor reported no HTTP port');
      scanner = await ScannerProcess.start(d, brokers, {
        maxCommandLag: relay!.maxLag,
        nice: o.scannerNice,
        processors: { urls: [proc.statusUrl], token: statusToken },
      });
      await scanner.ready();
      log(`sweep ${name}: scanner replica caught up`);
    }

    const loadConfig: LoadChildConfig = { brokers, topic: d.eventsTopic, rate: o.rate, spec: s.loadSpec };
    load = Child.start('load', 'load-child', loadConfig);
    const behind: Array<{ at: number; ms: number }> = [];
    load.on((m) => {
      if (m.type === 'progress' || m.type === 'measured') behind.push({ at: Number(m.at), ms: Number(m.behindMs) });
    });
    const loadStart = (await load.next<{ type: 'started'; at: number }>('started')).at;
    log(`sweep ${name}: steady load of ${o.rate} events/s; baseline`);
    const pids = { processor: proc.child.pid, scanner: scanner?.pid, load: load.pid, broker: brokerPid(brokers[0]!) };
    await sleep(o.warmupSec * 1000);
    const atBaseline = snapshot(pids);
    await sleep(o.baselineSec * 1000);

    log(`sweep ${name}: sweeping`);
    const atSweep = snapshot(pids);
    const paceSamples: PaceSample[] = [];
    const signalSamples: SignalSample[] = [];
    // The pacer's signal: what the scanner read of the processor, once a second while the sweep runs.
    let sweeping = true;
    const signal = (async () => {
      while (scanner && sweeping) {
        const got = await scanner.processorReadings().catch(() => []);
        for (const r of got) signalSamples.push(r);
        await sleep(1000);
      }
    })();
    const [{ start, end, work, cut }] = await Promise.all([
      sweep(mode, o, proc, scanner, relay, (p) => paceSamples.push(p)).finally(() => (sweeping = false)),
      s.duringSweep?.(proc, d),
    ]);
    await signal;
    const afterSweep = snapshot(pids);
    log(`sweep ${name}: done in ${end - start} ms; tail`);
    await sleep(o.tailSec * 1000);

    load.send({ type: 'finish', total: s.loadTotal });
    const measured = await load.next<{ type: 'measured'; count: number }>('measured');
    const finished = await load.next<{ type: 'finished'; count: number }>('finished');
    await waitCommittedToEnd(admin, d.appId, [d.eventsTopic, d.commandsTopic]);
    await load.stop();
    const scannerPeak = scanner?.peakRss();
    await scanner?.stop();
    const processorPeak = await proc.stop();

    log(`sweep ${name}: checking the final state against the oracle`);
    // The load's producer is not idempotent: a send retried across a broker kill can be written
    // twice. The processor must then fold both, so the oracle folds the events topic as written.
    const written = await recordCount(admin, d.eventsTopic);
    const unswept =
      written === finished.count
        ? loadedState(s.seed, s.loadSpec, finished.count)
        : foldedState(s.seed, await writtenEvents(kafka, d.eventsTopic));
    // A sweep cut part-way: each key as swept or as not (the oracle's maps are copies).
    const oracle = sweptState(cut ? new Map(unswept) : unswept);
    if (written !== finished.count)
      log(
        `sweep ${name}: the events topic holds ${written} records for ${finished.count} events sent; the oracle folds those`,
      );
    const check = checkState(readStores(d.stateDir, d.partitions), oracle, cut ? unswept : undefined);
    if (!check.ok) log(`sweep ${name}: the state differs from the oracle: ${JSON.stringify(check)}`);
    const result = summarizePhase(mode, round, o, proc, {
      start,
      end,
      work,
      loadStart,
      measuredEnd: end + o.tailSec * 1000,
      // From the baseline on (the first seconds warm the generator up).
      loadBehindMs: Math.max(0, ...behind.filter((b) => b.at >= start - o.baselineSec * 1000).map((b) => b.ms)),
      loadEvents: finished.count,
      eventsWritten: written,
      measuredEvents: measured.count,
      check,
      peaks: { processor: processorPeak, scanner: scannerPeak },
      cpuBaseline: cpuBetween(atBaseline, atSweep),
      cpuDuring: cpuBetween(atSweep, afterSweep),
    });
    if (cut) {
      const emitted = work['emitted'] ?? 0;
      const walked = work['walked'] ?? 0;
      const matched = work['matched'] ?? 0;
      result.truncated = {
        emitted,
        walked,
        keys: o.keys,
        projectedMs: result.sweepMs / cutFraction(walked, o.keys, matched, emitted),
      };
      log(
        `sweep ${name}: cut after ${result.sweepMs} ms, ${walked} of ${o.keys} keys walked, ${emitted} commands emitted`,
      );
    }
    if (relay)
      result.relay = {
        rate: relay.rate,
        maxLag: relay.maxLag,
        budget: relay.budgetLabel,
        pace: summarizePace(paceSamples, start),
        signal: summarizeSignal(signalSamples),
      };
    return result;
  } finally {
    load?.kill();
    await scanner?.stop();
    proc.child.kill();
  }
}

/**
 * Runs the sweep the way `mode` says; returns when its last change is committed (in-loop: the
 * transaction of each task that carries the task's last sweep change; relay: the scan is
 * completed, every command answered).
 */
async function sweep(
  mode: SweepMode,
  o: BenchOptions,
  proc: ProcessorRun,
  scanner?: ScannerProcess,
  relay?: RelayPlan,
  onPace?: (sample: PaceSample) => void,
): Promise<{ start: number; end: number; work: Record<string, number>; cut?: boolean }> {
  if (mode === 'relay') {
    const posted = Date.now();
    const options: { rate: number; latencyBudget?: LatencyBudget } = { rate: relay!.rate };
    if (relay!.budget) options.latencyBudget = relay!.budget;
    const scan = await scanner!.createScan({ ...DORMANCY_SWEEP, asOf: AS_OF, options });
    const created0 = Date.parse(scan.createdAt);
    const cancelAt =
      relay!.maxSweepMs === undefined ? undefined : (Number.isFinite(created0) ? created0 : posted) + relay!.maxSweepMs;
    const done = await scanner!.finished(scan.id, undefined, undefined, onPace, cancelAt);
    const { scanned, matched, emitted } = done.counts;
    // The scan's own record: created (POST /scans) to completed (every command answered).
    const created = Date.parse(scan.createdAt);
    const finished = done.finishedAt === null ? NaN : Date.parse(done.finishedAt);
    const start = Number.isFinite(created) ? created : posted;
    const end = Number.isFinite(finished) && finished >= start ? finished : done.seenDoneAt;
    return {
      start,
      end,
      work: { walked: scanned, matched, emitted, ...done.counts.results },
      cut: done.cancelledAt !== undefined,
    };
  }
  const command: SweepCommand = {
    type: 'sweep',
    sweepId: `sweep-${mode}`,
    asOf: AS_OF,
    keysPerSlice: mode === 'blocking' ? null : o.chunkKeys,
  };
  const done = proc.child.next<{
    type: 'sweep-done';
    armedAt: number;
    walkedAt: number;
    doneAt: number;
    walked: number;
    matched: number;
    changes: number;
    slices: number;
  }>('sweep-done', 1_800_000);
  proc.child.send(command);
  const r = await done;
  return {
    start: r.armedAt,
    end: r.doneAt,
    work: { walked: r.walked, matched: r.matched, changes: r.changes, slices: r.slices },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
