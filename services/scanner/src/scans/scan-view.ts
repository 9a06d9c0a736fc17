import type { PartitionLag } from '../metrics';
import type { PaceLimiter, PaceState } from './command-pacer';
import type { OutcomeCounts, ScanOptions, ScanPhase, ScanRecord, ScanStatus } from './scan';

/** A scan as the API shows it. */
export interface ScanView {
  id: string;
  url: string;
  status: ScanStatus;
  phase: ScanPhase | null;
  condition: unknown;
  action: unknown;
  options: ScanOptions;
  asOf: string;
  counts: {
    /** Replica keys walked, the batch being sent included (so scanned ≥ matched ≥ emitted). */
    scanned: number;
    matched: number;
    /** Commands handed to the producer, counted just before their first send. */
    emitted: number;
    /** Emitted commands without a result yet: always emitted − the sum of `results`. */
    pending: number;
    results: OutcomeCounts;
  };
  progress: {
    /** Replica rows when the walk started. */
    replicaRows: number | null;
    /** Share of the walk done, 0..1; null before the walk starts. */
    fraction: number | null;
    /** Estimated seconds until the walk ends, from the walk rate so far. */
    etaSeconds: number | null;
    eta: string | null;
  };
  /**
   * While the scan walks and emits: the command rate the pacer allows now and what limits it, the
   * event p99 budget it holds to, the baseline and the last reading. Null otherwise (pending,
   * waiting for the replica or results, finished, a dry run).
   */
  pace: {
    rate: number;
    limiter: PaceLimiter;
    budgetP99Ms: number | null;
    baselineP99Ms: number | null;
    eventP99Ms: number | null;
  } | null;
  backoffSeconds: number;
  replicaLag: { total: number; partitions: PartitionLag[] };
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  error: string | null;
}

/** ISO-8601, or null when Date cannot represent `ms`: a view never throws on what a row holds. */
const iso = (ms: number | null) => {
  const date = ms === null ? undefined : new Date(ms);
  return date === undefined || Number.isNaN(date.getTime()) ? null : date.toISOString();
};

export function scanUrl(id: string): string {
  return `/scans/${encodeURIComponent(id)}`;
}

/** Pure: the API view of a scan from its record, its result counts and the replica's lag. */
export function toScanView(
  scan: ScanRecord,
  results: OutcomeCounts,
  lag: PartitionLag[],
  now: number,
  pace: PaceState | null = null,
): ScanView {
  const resolved = Object.values(results).reduce((sum, n) => sum + n, 0);
  const etaSeconds = walkEtaSeconds(scan);
  return {
    id: scan.id,
    url: scanUrl(scan.id),
    status: scan.status,
    phase: scan.status === 'running' ? scan.phase : null,
    condition: scan.spec.condition,
    action: scan.spec.action,
    options: scan.spec.options,
    // A row stored before asOf had its range may hold one Date cannot show: its epoch ms, as text.
    asOf: iso(scan.asOf) ?? String(scan.asOf),
    counts: {
      // The batch being sent is part of the walk: its commands count as emitted as they go out,
      // so its keys and matches count too (they are added to the scan itself when it is committed).
      scanned: scan.scanned + (scan.inflight?.walked ?? 0),
      matched: scan.matched + (scan.inflight?.matched ?? 0),
      emitted: scan.emitted,
      // A command is counted as emitted before it is sent, so its result cannot come first:
      // emitted = pending + results holds at every read (the floor only guards a foreign result).
      pending: Math.max(0, scan.emitted - resolved),
      results,
    },
    progress: {
      replicaRows: scan.replicaRows,
      fraction: walkFraction(scan),
      etaSeconds,
      eta: etaSeconds === null ? null : iso(now + etaSeconds * 1000),
    },
    pace:
      pace === null || scan.status !== 'running'
        ? null
        : {
            rate: round1(pace.rate),
            limiter: pace.limiter,
            budgetP99Ms: pace.budgetP99Ms === null ? null : round1(pace.budgetP99Ms),
            baselineP99Ms: pace.baselineP99Ms === null ? null : round1(pace.baselineP99Ms),
            eventP99Ms: pace.eventP99Ms === null ? null : round1(pace.eventP99Ms),
          },
    backoffSeconds: Math.round(scan.backoffMs) / 1000,
    replicaLag: { total: lag.reduce((sum, p) => sum + p.lag, 0), partitions: lag },
    createdAt: iso(scan.createdAt) ?? String(scan.createdAt),
    startedAt: iso(scan.startedAt),
    finishedAt: iso(scan.finishedAt),
    error: scan.error,
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

function walkFraction(scan: ScanRecord): number | null {
  if (scan.walkDone || scan.status === 'completed') return 1;
  if (scan.replicaRows === null) return null;
  if (scan.replicaRows === 0) return 0;
  return Math.min(1, scan.scanned / scan.replicaRows);
}

/** Remaining rows at the rate walked so far; null when not walking or nothing is known yet. */
export function walkEtaSeconds(scan: ScanRecord): number | null {
  if (scan.status !== 'running' || scan.phase !== 'walking' || scan.replicaRows === null) return null;
  if (scan.scanned === 0 || scan.walkMs <= 0) return null;
  const remaining = Math.max(0, scan.replicaRows - scan.scanned);
  return Math.round(remaining / (scan.scanned / scan.walkMs) / 100) / 10;
}
