import type { LatencySummary } from '../lib';
import type { SweepResult } from '../sweeps';
import type { ThroughputResult } from '../throughput';

/** The same three figures on one Kafka. */
export interface SideResult {
  throughput: {
    events: number;
    eventsPerSec: number;
    rawEventsPerSec: number;
    ratio: number;
    transactionMs: LatencySummary;
    stateMatchesOracle: boolean;
  };
  /** The throughput run's state restored from the changelog into an empty state directory. */
  restore: { records: number; ms: number; recordsPerSec: number; readyMs: number };
  sweep: {
    keys: number;
    sweepMs: number;
    emitted: number;
    commandsPerSec: number;
    /** The seeded state the processor restored before the sweep. */
    restore: { records: number; ms: number };
    eventsPerSecBaseline: number;
    eventsPerSecDuring: number;
    eventCommitMs: { baseline: LatencySummary; during: LatencySummary };
    longestTaskStallMs: number;
    loadBehindMs: number;
    /** Steady-load events sent, and records the events topic holds (more: sends retried and written twice). */
    eventsSent: number;
    eventsWritten: number;
    stateMatchesOracle: boolean;
  };
}

/** Part 5's figures of one Kafka, from part 1's throughput run and part 2's relay sweep. */
export function side(t: ThroughputResult, s: SweepResult): SideResult {
  const emitted = s.work.emitted ?? 0;
  return {
    throughput: {
      events: t.events,
      eventsPerSec: t.eos.eventsPerSec,
      rawEventsPerSec: t.raw.eventsPerSec,
      ratio: t.ratio,
      transactionMs: t.eos.transactionSummary.total,
      stateMatchesOracle: t.eos.stateMatchesOracle,
    },
    restore: t.restore,
    sweep: sweepFigures(s, emitted),
  };
}

/** What part 5 reports of a relay sweep (`emitted`: the commands the relay produced). */
export function sweepFigures(s: SweepResult, emitted: number): SideResult['sweep'] {
  return {
    keys: s.work.walked ?? 0,
    sweepMs: s.sweepMs,
    emitted,
    commandsPerSec: (emitted * 1000) / Math.max(1, s.sweepMs),
    restore: s.restore,
    eventsPerSecBaseline: s.eventsPerSecBaseline,
    eventsPerSecDuring: s.eventsPerSecDuring,
    eventCommitMs: { baseline: s.baseline, during: s.during },
    longestTaskStallMs: s.taskStall.ms,
    loadBehindMs: s.loadBehindMs,
    eventsSent: s.loadEvents,
    eventsWritten: s.eventsWritten,
    stateMatchesOracle: s.check.ok,
  };
}
