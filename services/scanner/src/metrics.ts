import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import { createServiceRegistry, httpRequestDuration, metricFactory } from '@state-relay/service-kit';
import { PACE_LIMITERS, type PaceState } from './scans/command-pacer';
import { SCAN_STATUSES, type ScanStatus } from './scans/scan';

export interface PartitionLag {
  partition: number;
  lag: number;
}

/** Read at scrape time, so gauges never go stale: the scanner binds these once it has its parts. */
export interface MetricSources {
  scansByStatus(): Map<ScanStatus, number>;
  replicaLag(): PartitionLag[];
  walBytes(): number;
  /** The pace of the walk emitting now; null when none is. */
  pace?(): PaceState | null;
}

/**
 * The scanner's Prometheus metrics, in one registry per scanner instance, with Node's default
 * metrics under their standard names labelled `service="scanner"`. The README's table lists every
 * one (a test compares them).
 */
export function createScannerMetrics() {
  const registry = createServiceRegistry('scanner');
  const metrics = metricFactory(registry);
  let sources: MetricSources | undefined;
  return {
    registry,
    bind(s: MetricSources): void {
      sources = s;
    },
    httpRequestDuration: httpRequestDuration(metrics, 'scanner'),
    scans: metrics.gauge('scanner_scans', 'Scans by status', ['status'], function () {
      const counts = sources?.scansByStatus();
      for (const status of SCAN_STATUSES) this.set({ status }, counts?.get(status) ?? 0);
    }),
    consumerReplacements: metrics.counter(
      'scanner_consumer_replacements_total',
      'Consumers (replica, results) replaced in-process because kafkajs gave up on them (crashed) or they stopped fetching (stalled)',
      ['consumer', 'reason'],
    ),
    producerReplacements: metrics.counter(
      'scanner_command_producer_replacements_total',
      'Command producers replaced because a send failed (failed) or got no acknowledgement within 40 s (timed_out)',
      ['reason'],
    ),
    adminReplacements: metrics.counter(
      'scanner_admin_replacements_total',
      'Admin clients (offsets, lag, topic checks) replaced because a call failed or got no answer within 40 s',
    ),
    rowsScanned: metrics.counter('scanner_rows_scanned_total', 'Replica rows walked by scans'),
    rowsMatched: metrics.counter('scanner_rows_matched_total', 'Walked rows that matched their scan’s condition'),
    commandsEmitted: metrics.counter(
      'scanner_commands_emitted_total',
      'Update commands sent to the commands topic (re-sends after a restart included)',
    ),
    results: metrics.counter(
      'scanner_command_results_total',
      'Command results recorded (first result per command), by outcome',
      ['outcome'],
      // Every outcome from the start, at 0: a dashboard shows them all, increase() sees the first.
      COMMAND_OUTCOMES.map((outcome) => ({ outcome })),
    ),
    commandRate: metrics.gauge(
      'scanner_command_rate',
      'Commands per second the pacer allows the walk emitting now (0 when none is)',
      undefined,
      function () {
        this.set(sources?.pace?.()?.rate ?? 0);
      },
    ),
    commandRateLimiter: metrics.gauge(
      'scanner_command_rate_limiter',
      'What limits the walk’s command rate now: 1 for that limiter, 0 for the others (all 0 when no walk emits)',
      ['limiter'],
      function () {
        const limiter = sources?.pace?.()?.limiter;
        for (const l of PACE_LIMITERS) this.set({ limiter: l }, l === limiter ? 1 : 0);
      },
    ),
    backoffSeconds: metrics.counter(
      'scanner_backoff_seconds_total',
      'Time scans spent waiting because the processor’s lag on the commands topic was above MAX_COMMAND_LAG',
    ),
    replicaRecords: metrics.counter('scanner_replica_records_total', 'Changelog records applied to the replica'),
    undecodable: metrics.counter(
      'scanner_undecodable_records_total',
      'Records skipped because they do not decode, by topic',
      ['topic'],
    ),
    replicaLag: metrics.gauge(
      'scanner_replica_lag_records',
      'Changelog records not yet in the replica, per partition',
      ['partition'],
      function () {
        for (const { partition, lag } of sources?.replicaLag() ?? []) this.set({ partition: String(partition) }, lag);
      },
    ),
    walBytes: metrics.gauge(
      'scanner_replica_wal_bytes',
      'Size of the replica’s SQLite write-ahead log',
      undefined,
      function () {
        this.set(sources?.walBytes() ?? 0);
      },
    ),
  };
}

export type ScannerMetrics = ReturnType<typeof createScannerMetrics>;
