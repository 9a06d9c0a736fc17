import { createServiceRegistry } from '@state-relay/service-kit';
import { Counter, Gauge } from 'prom-client';
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
}

/**
 * The scanner's Prometheus metrics, in one registry per scanner instance, with Node's default
 * metrics under their standard names labelled `service="scanner"`.
 */
export function createScannerMetrics() {
  const registry = createServiceRegistry('scanner');
  let sources: MetricSources | undefined;
  return {
    registry,
    bind(s: MetricSources): void {
      sources = s;
    },
    scans: new Gauge({
      name: 'scanner_scans',
      help: 'Scans by status',
      labelNames: ['status'] as const,
      registers: [registry],
      collect() {
        const counts = sources?.scansByStatus();
        for (const status of SCAN_STATUSES) this.set({ status }, counts?.get(status) ?? 0);
      },
    }),
    consumerReplacements: new Counter({
      name: 'scanner_consumer_replacements_total',
      help: 'Consumers (replica, results) replaced in-process because kafkajs gave up on them (crashed) or they stopped fetching (stalled)',
      labelNames: ['consumer', 'reason'] as const,
      registers: [registry],
    }),
    producerReplacements: new Counter({
      name: 'scanner_command_producer_replacements_total',
      help: 'Command producers replaced because a send failed (failed) or got no acknowledgement within 40 s (timed_out)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    adminReplacements: new Counter({
      name: 'scanner_admin_replacements_total',
      help: 'Admin clients (offsets, lag, topic checks) replaced because a call failed or got no answer within 40 s',
      registers: [registry],
    }),
    rowsScanned: new Counter({
      name: 'scanner_rows_scanned_total',
      help: 'Replica rows walked by scans',
      registers: [registry],
    }),
    rowsMatched: new Counter({
      name: 'scanner_rows_matched_total',
      help: 'Walked rows that matched their scan’s condition',
      registers: [registry],
    }),
    commandsEmitted: new Counter({
      name: 'scanner_commands_emitted_total',
      help: 'Update commands sent to the commands topic (re-sends after a restart included)',
      registers: [registry],
    }),
    results: new Counter({
      name: 'scanner_command_results_total',
      help: 'Command results recorded (first result per command), by outcome',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    backoffSeconds: new Counter({
      name: 'scanner_backoff_seconds_total',
      help: 'Time scans spent waiting because the processor’s lag on the commands topic was above MAX_COMMAND_LAG',
      registers: [registry],
    }),
    replicaRecords: new Counter({
      name: 'scanner_replica_records_total',
      help: 'Changelog records applied to the replica',
      registers: [registry],
    }),
    undecodable: new Counter({
      name: 'scanner_undecodable_records_total',
      help: 'Records skipped because they do not decode, by topic',
      labelNames: ['topic'] as const,
      registers: [registry],
    }),
    replicaLag: new Gauge({
      name: 'scanner_replica_lag_records',
      help: 'Changelog records not yet in the replica, per partition',
      labelNames: ['partition'] as const,
      registers: [registry],
      collect() {
        for (const { partition, lag } of sources?.replicaLag() ?? []) this.set({ partition: String(partition) }, lag);
      },
    }),
    walBytes: new Gauge({
      name: 'scanner_replica_wal_bytes',
      help: 'Size of the replica’s SQLite write-ahead log',
      registers: [registry],
      collect() {
        this.set(sources?.walBytes() ?? 0);
      },
    }),
  };
}

export type ScannerMetrics = ReturnType<typeof createScannerMetrics>;
