import type { CommandOutcome } from '@state-relay/contracts';
import type { Action, Condition } from '@state-relay/rules';
import type { LatencyBudget } from './latency-budget';

export const SCAN_STATUSES = ['pending', 'running', 'completed', 'cancelled', 'failed'] as const;
export type ScanStatus = (typeof SCAN_STATUSES)[number];
export const FINISHED_STATUSES: readonly ScanStatus[] = ['completed', 'cancelled', 'failed'];

/** Where a running scan is: replica catch-up, then the walk (and emission), then waiting for results. */
export const SCAN_PHASES = ['waiting_for_replica', 'walking', 'awaiting_results'] as const;
export type ScanPhase = (typeof SCAN_PHASES)[number];

export interface ScanOptions {
  /** Commands per second; 0 or absent = unlimited (the API takes 0 or 0.001 to 1e6). */
  rate?: number;
  /** Replica keys walked per chunk; overrides CHUNK_SIZE. */
  batchSize?: number;
  /** Walk and count matches, emit nothing. */
  dryRun?: boolean;
  /** Stop emitting after this many commands. */
  maxCommands?: number;
  /** Send each command with the replica row's version as expectedVersion. */
  expectVersion?: boolean;
  /** The event p99 the sweep may reach (the pacer holds to it); absent: SCAN_LATENCY_BUDGET. */
  latencyBudget?: LatencyBudget;
  /**
   * How long the scan may run (ISO-8601 duration, from when it started running, results included)
   * before it ends `failed`; absent: SCAN_MAX_DURATION_MS.
   */
  maxDuration?: string;
}

/** What a scan does, fixed at creation. */
export interface ScanSpec {
  condition: Condition;
  action: Action;
  options: ScanOptions;
}

/** The batch being emitted: its commands are recorded before they are sent, so a crash re-sends them. */
export interface InflightChunk {
  /** Last key walked by the batch; the cursor becomes this once the batch is sent. */
  toKey: string;
  walked: number;
  matched: number;
  /** Commands recorded for the batch (its scan_commands rows in (cursor, toKey]), in key order. */
  commands: number;
  /**
   * How many of them, in key order, are already counted in the scan's `emitted`: each command is
   * counted once, just before it is first handed to the producer, so a result never precedes it.
   */
  sent: number;
}

/** A scan as persisted in the scanner's own SQLite. Times are epoch ms. */
export interface ScanRecord {
  id: string;
  status: ScanStatus;
  phase: ScanPhase | null;
  spec: ScanSpec;
  asOf: number;
  /** Last replica key walked and emitted; null before the first chunk. */
  cursor: string | null;
  walkDone: boolean;
  inflight: InflightChunk | null;
  scanned: number;
  matched: number;
  /** Commands handed to the producer at least once (counted before the first send, so ≥ resolved). */
  emitted: number;
  /** Emitted commands with a recorded result. */
  resolved: number;
  backoffMs: number;
  /** Time spent walking and emitting (not waiting), for the ETA. */
  walkMs: number;
  /** Replica rows when the walk started: the ETA's denominator. */
  replicaRows: number | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  error: string | null;
}

export type OutcomeCounts = Record<CommandOutcome, number>;
