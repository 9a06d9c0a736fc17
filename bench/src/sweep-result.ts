import type { CpuUse } from './cpu';
import type { LatencyBudget, PaceSummary, SignalSummary } from './latency-budget';
import type { BenchOptions } from './options';
import type { ProcessorRun } from './processor-run';
import { summarize, type LatencySummary, type Stall, type TransactionSummary } from './stats';
import type { StateCheck } from './verify';

export const SWEEP_MODES = ['blocking', 'chunked', 'relay'] as const;
export type SweepMode = (typeof SWEEP_MODES)[number];

export const MODE_LABELS: Record<SweepMode, string> = {
  blocking: 'a. blocking in-loop',
  chunked: 'b. chunked in-loop',
  relay: 'c. topic relay',
};

/** "a. blocking in-loop", with the round when there are several. */
export function sweepLabel(r: { mode: SweepMode; round: number }, rounds: number): string {
  return rounds > 1 ? `${MODE_LABELS[r.mode]}, round ${r.round}` : MODE_LABELS[r.mode];
}

/** How a relay phase runs the scanner. */
export interface RelayPlan {
  /** options.rate: the cap (0: uncapped). */
  rate: number;
  /** The scanner's MAX_COMMAND_LAG. */
  maxLag: number;
  /** options.latencyBudget; absent: the scan sets none (the scanner's SCAN_LATENCY_BUDGET, 1.2x by default). */
  budget?: LatencyBudget;
  /** How the budget is reported: `1.2x`, `off`, `default (1.2x)`. */
  budgetLabel: string;
  /** Names the deployment and the log lines apart from other relay phases of a run (part 6: the budget). */
  tag?: string;
  /** Cut the sweep (POST /scans/:id/cancel) this long after the scan was created (part 6 bounds its time so). */
  maxSweepMs?: number;
}

export interface SweepResult {
  mode: SweepMode;
  /** 1, 2, ...: with several rounds the order alternates (a b c, then c b a) to even out drift. */
  round: number;
  /**
   * In-loop: arming the sweep to the commit of its last change. Relay: the scan's creation to
   * its completion (every command answered), as the scanner recorded them.
   */
  sweepMs: number;
  /** When the sweep started (epoch ms). */
  startedAt: number;
  /** Event latency (produce -> commit): events committed in the baseline window / in flight during the sweep. */
  baseline: LatencySummary;
  during: LatencySummary;
  /** p99 during the sweep / p99 of the baseline window just before it. */
  p99Ratio: number;
  /**
   * Longest single-task stall (time an event of the task waited while the task committed no
   * event: see CommitLog.longestStall) overlapping the sweep, and in the baseline window.
   */
  taskStall: Stall;
  baselineTaskStall: Stall;
  /** The same for all tasks together (no event committed anywhere). */
  anyStall: Stall;
  baselineAnyStall: Stall;
  eventsPerSecBaseline: number;
  eventsPerSecDuring: number;
  /** What the sweep did: keys walked, matches, changes (in-loop) or results by outcome (relay). */
  work: Record<string, number>;
  restore: { records: number; ms: number };
  /** The relay's commands: produce by the scanner -> commit, of those committed during the sweep. */
  commandLatency: LatencySummary;
  /** The processor's transactions (one per task per commit interval) in the baseline window and during the sweep. */
  txBaseline: TransactionSummary;
  txDuring: TransactionSummary;
  /** CPU cores used by each process, and how busy the machine was, in the baseline window and during the sweep. */
  cpuBaseline: CpuUse;
  cpuDuring: CpuUse;
  peakRssBytes: { processor?: number; scanner?: number };
  /** Warnings the processor logged during the whole phase, by message (e.g. a failed batch). */
  processorWarnings: Record<string, number>;
  /** The processor's highest JS heap and Buffer/ArrayBuffer bytes seen. */
  processorMemory: { heapUsed: number; external: number };
  /** How far the load generator fell behind its schedule at worst (ms): should stay near 0. */
  loadBehindMs: number;
  /** Steady-load events: sent at the fixed rate while measuring, and in total (after the top-up). */
  measuredLoadEvents: number;
  loadEvents: number;
  /** Records in the events topic at the end: more than `loadEvents` when a send was retried and written twice. */
  eventsWritten: number;
  check: StateCheck;
  /** For the chart: seconds from the load's start. */
  timeline: Array<{ t: number; p50: number; p99: number; max: number; n: number }>;
  window: { start: number; end: number };
  bucketMs: number;
  /**
   * A sweep cut at its time limit (RelayPlan.maxSweepMs): `sweepMs` is then the time to the cut; the
   * keys walked and commands emitted by then, and the duration the whole sweep would have taken at its
   * rate so far (sweepMs / latency-budget.ts's cutFraction; the last results come a little later). The final state is
   * checked key by key as either swept or not.
   */
  truncated?: { walked: number; keys: number; emitted: number; projectedMs: number };
  /** A relay phase: its cap, lag pause and budget, and its pace over the walk (GET /scans/:id, polled every 100 ms). */
  relay?: {
    rate: number;
    maxLag: number;
    budget: string;
    pace: PaceSummary;
    /** The scanner's readings of the processor's GET /status during the sweep (polled once a second). */
    signal: SignalSummary;
  };
}

export interface PhaseFacts {
  start: number;
  end: number;
  work: Record<string, number>;
  loadStart: number;
  measuredEnd: number;
  loadBehindMs: number;
  loadEvents: number;
  eventsWritten: number;
  measuredEvents: number;
  check: StateCheck;
  peaks: { processor?: number; scanner?: number };
  cpuBaseline: CpuUse;
  cpuDuring: CpuUse;
}

export function summarizePhase(
  mode: SweepMode,
  round: number,
  o: BenchOptions,
  proc: ProcessorRun,
  f: PhaseFacts,
): SweepResult {
  const { log: commits } = proc;
  const baselineFrom = f.start - o.baselineSec * 1000;
  // Baseline: events committed before the sweep began, so none of it can have touched them.
  // During: every event in flight at some point of the sweep, so one stuck behind a stall
  // counts even if it was produced before the sweep began or committed after it ended.
  const baseline = summarize(commits.latenciesBetween(baselineFrom, f.start));
  const during = summarize(commits.latenciesOverlapping(f.start, f.end));
  const sweepSec = Math.max(0.001, (f.end - f.start) / 1000);
  // Several commits per task per second: half-second buckets are plenty.
  const bucketMs = Math.max(500, Math.round((f.measuredEnd - f.loadStart) / 200 / 250) * 250);
  return {
    mode,
    round,
    sweepMs: f.end - f.start,
    startedAt: f.start,
    baseline,
    during,
    p99Ratio: during.p99 / baseline.p99,
    taskStall: commits.longestStall(f.start, f.end, true),
    baselineTaskStall: commits.longestStall(baselineFrom, f.start, true),
    anyStall: commits.longestStall(f.start, f.end, false),
    baselineAnyStall: commits.longestStall(baselineFrom, f.start, false),
    eventsPerSecBaseline: commits.eventsBetween(baselineFrom, f.start) / o.baselineSec,
    eventsPerSecDuring: commits.eventsBetween(f.start, f.end + 1) / sweepSec,
    work: f.work,
    restore: proc.restored,
    cpuBaseline: f.cpuBaseline,
    cpuDuring: f.cpuDuring,
    commandLatency: summarize(commits.commandLatenciesBetween(f.start, f.end + 1)),
    txBaseline: commits.transactionsBetween(baselineFrom, f.start, proc.tasks),
    txDuring: commits.transactionsBetween(f.start, f.end + 1, proc.tasks),
    peakRssBytes: f.peaks,
    processorMemory: proc.memory,
    processorWarnings: proc.warnings,
    loadBehindMs: f.loadBehindMs,
    measuredLoadEvents: f.measuredEvents,
    loadEvents: f.loadEvents,
    eventsWritten: f.eventsWritten,
    check: f.check,
    timeline: commits.buckets(f.loadStart, f.measuredEnd, bucketMs),
    window: { start: (f.start - f.loadStart) / 1000, end: (f.end - f.loadStart) / 1000 },
    bucketMs,
  };
}
