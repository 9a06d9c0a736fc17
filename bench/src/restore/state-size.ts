import { AS_OF, log } from '../common';
import { createDeploymentTopics, newDeployment, type Deployment } from '../deployment';
import { metricSum, TaskStore, type Action, type Admin, type Condition, type Kafka } from '../lib';
import { ProcessorRun } from '../processor-run';
import { PhaseRss, type PhasePeak } from '../rss';
import { ScannerProcess, type ScannerLogLine } from '../scanner-run';
import { ceilingOf, readBare, type BareRead } from './ceiling';
import { fillChangelog, type FillResult } from './fill';

/** The sweep over the state: matches about 0.1 % of the seeded accounts, so it walks every row and emits little. */
export const SPARSE_SWEEP: { condition: Condition; action: Action } = {
  condition: { field: 'balance', op: 'gte', value: 19_975 },
  action: { set: { review: 'high-balance' } },
};

/**
 * The scanner's metrics this part reads, found in its /metrics by pattern: their names are
 * services/scanner/src/metrics.ts's (scanner_replica_records_total, scanner_replica_lag…) and
 * prom-client's default ones, prefixed or not, and may be renamed.
 */
export const SCANNER_METRICS = {
  records: /^scanner_replica_records/,
  lag: /^scanner_replica_lag/,
  heap: /(^|_)nodejs_heap_size_used_bytes$/,
} as const;
const PROCESSOR_RESTORED_METRIC = 'processor_restore_records_total';

export interface MemoryPeak extends PhasePeak {
  /** Highest JS heap in use seen during the phase (processor: every 250 ms; scanner: /metrics every second). */
  heapBytes: number;
}

export interface StateSizeResult {
  keys: number;
  fill: FillResult;
  /** Bare reads in run order: three before the processor's restore, the fastest of them again after the sweep. */
  bare: BareRead[];
  ceiling: { recordsPerSec: number; recordsPerSecAfterJoin: number };
  processor: {
    /** From its "tasks restored from the changelog" line: records, ms (stores opened → every task RUNNING). */
    records: number;
    ms: number;
    recordsPerSec: number;
    /** / the fastest bare read's rate from connecting to the end; / the fastest bare consumer's. */
    ratio: number;
    ratioToConsumer: number;
    /** processor_restore_records_total when ready. */
    metricRecords: number;
    /** Entities in the task stores once the processor stopped, per task (absent in runs before this was counted). */
    storeEntities?: number[];
    /** Process spawn → every task RUNNING (start, group join, fencing, restore). */
    readyMs: number;
    memory: MemoryPeak;
  };
  scanner: {
    /** scanner_replica_records_total when ready; the lag summed over partitions then. */
    records: number;
    lag: number;
    /** The metric names those were read from. */
    metricNames: { records?: string; lag?: string };
    /** The replica follower joined its group → "replica caught up with the changelog" (the scanner's log times). */
    ms: number;
    recordsPerSec: number;
    /** / the fastest bare read's rate from its group joined (direct: connected) to the end; / the fastest bare consumer's. */
    ratio: number;
    ratioToConsumer: number;
    readyMs: number;
    memory: MemoryPeak;
  };
  sweep: {
    ms: number;
    scanned: number;
    matched: number;
    emitted: number;
    applied: number;
    /** The scan's results by outcome (absent in runs before they were kept). */
    results?: Record<string, number>;
    expectedMatches: number;
    rowsPerSec: number;
    processor: MemoryPeak;
    scanner: MemoryPeak;
  };
  ok: boolean;
  problems: string[];
}

/**
 * One state size: a changelog of `keys` entities, then back to back on the same broker: the
 * bare reads (bench/src/restore/ceiling.ts), a processor restoring it into an empty state directory, a scanner catching its
 * replica up from empty, a sparse sweep through the scanner's API, and a bare read again.
 */
export async function measureStateSize(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  keys: number,
  o: { partitions: number; processorEnv: Record<string, string>; txRetryMs?: number; scannerNice: number },
  workDir: string,
): Promise<StateSizeResult> {
  const d = newDeployment(`restore${keys}`, o.partitions, workDir);
  const problems: string[] = [];
  await createDeploymentTopics(admin, d);
  log(`restore ${n(keys)}: filling ${d.changelogTopic}`);
  const fill = await fillChangelog(kafka, d.changelogTopic, keys, { seed: 13, count: SPARSE_SWEEP.condition });
  log(`restore ${n(keys)}: filled in ${fill.ms} ms (${Math.round(fill.meanValueBytes)} bytes per value); bare reads`);
  const bare: BareRead[] = [];
  for (const via of ['consumer', 'consumer-defaults', 'direct'] as const)
    bare.push(await readBare(brokers, d.changelogTopic, via));

  let proc: ProcessorRun | undefined;
  let scanner: ScannerProcess | undefined;
  try {
    log(`restore ${n(keys)}: processor restoring into an empty state directory`);
    proc = new ProcessorRun(brokers, d, o);
    const procHeap = heapWatch(proc);
    const restoreRss = new PhaseRss({ processor: proc.child.pid }, ['processor']);
    const readyAt = await proc.ready();
    const restorePeak = restoreRss.finish().processor!;
    const restoreHeap = procHeap.stop();
    const restored = proc.restored;
    const metricRecords = await proc.metric(PROCESSOR_RESTORED_METRIC);
    log(`restore ${n(keys)}: processor restored ${n(restored.records)} records in ${restored.ms} ms`);

    log(`restore ${n(keys)}: scanner catching up its replica from empty`);
    const catchUp = await startScanner(d, brokers, o.scannerNice);
    scanner = catchUp.scanner;
    const catchUpRss = new PhaseRss({ scanner: scanner.pid }, ['scanner']);
    const catchUpHeap = scannerHeapWatch(scanner);
    const scannerReadyAt = await scanner.ready();
    const catchUpPeak = catchUpRss.finish().scanner!;
    const scannerHeap = await catchUpHeap.stop();
    const metrics = await scanner.metricsText();
    const times = catchUp.times();
    const recordsMetric = metricNamed(metrics, SCANNER_METRICS.records);
    const lagMetric = metricNamed(metrics, SCANNER_METRICS.lag);
    const scannerRecords = recordsMetric ? metricSum(metrics, recordsMetric) : NaN;
    const scannerLag = lagMetric ? metricSum(metrics, lagMetric) : NaN;
    if (!recordsMetric || !lagMetric)
      problems.push(`the scanner's /metrics has no ${SCANNER_METRICS.records} or no ${SCANNER_METRICS.lag}`);
    const scannerMs = times.caughtUpAt - times.joinedAt;
    log(`restore ${n(keys)}: replica caught up in ${scannerMs} ms; sparse sweep`);

    const sweepProcHeap = heapWatch(proc);
    const sweepRss = new PhaseRss({ processor: proc.child.pid, scanner: scanner.pid });
    const sweepHeap = scannerHeapWatch(scanner);
    const scan = await scanner.createScan({ ...SPARSE_SWEEP, asOf: AS_OF, options: {} });
    const done = await scanner.finished(scan.id);
    const sweepPeaks = sweepRss.finish();
    const sweepProcessorHeap = sweepProcHeap.stop();
    const sweepScannerHeap = await sweepHeap.stop();
    const sweepMs = Date.parse(done.finishedAt ?? '') - Date.parse(done.createdAt);
    log(`restore ${n(keys)}: swept ${n(done.counts.scanned)} rows in ${sweepMs} ms; bare read again`);

    const fastest = bare.reduce((a, b) => (b.recordsPerSec > a.recordsPerSec ? b : a));
    bare.push(await readBare(brokers, d.changelogTopic, fastest.settings));
    await scanner.stop();
    await proc.stop();
    const storeEntities = countStores(d.stateDir, d.partitions);
    const ceiling = ceilingOf(bare);
    const consumerCeiling = ceilingOf(bare.filter((b) => b.settings !== 'direct'));
    const restoreRate = rate(restored.records, restored.ms);
    const scannerRate = rate(scannerRecords, scannerMs);
    const result: StateSizeResult = {
      keys,
      fill,
      bare,
      ceiling,
      processor: {
        records: restored.records,
        ms: restored.ms,
        recordsPerSec: restoreRate,
        ratio: restoreRate / ceiling.recordsPerSec,
        ratioToConsumer: restoreRate / consumerCeiling.recordsPerSec,
        metricRecords,
        storeEntities,
        readyMs: readyAt - proc.spawnedAt,
        memory: { ...restorePeak, heapBytes: restoreHeap },
      },
      scanner: {
        records: scannerRecords,
        lag: scannerLag,
        metricNames: { ...(recordsMetric ? { records: recordsMetric } : {}), ...(lagMetric ? { lag: lagMetric } : {}) },
        ms: scannerMs,
        recordsPerSec: scannerRate,
        ratio: scannerRate / ceiling.recordsPerSecAfterJoin,
        ratioToConsumer: scannerRate / consumerCeiling.recordsPerSecAfterJoin,
        readyMs: scannerReadyAt - scanner.spawnedAt,
        memory: { ...catchUpPeak, heapBytes: scannerHeap },
      },
      sweep: {
        ms: sweepMs,
        scanned: done.counts.scanned,
        matched: done.counts.matched,
        emitted: done.counts.emitted,
        applied: done.counts.results['applied'] ?? 0,
        results: done.counts.results,
        expectedMatches: fill.matching,
        rowsPerSec: rate(done.counts.scanned, sweepMs),
        processor: { ...sweepPeaks.processor!, heapBytes: sweepProcessorHeap },
        scanner: { ...sweepPeaks.scanner!, heapBytes: sweepScannerHeap },
      },
      ok: false,
      problems,
    };
    problems.push(...checkStateSize(result));
    result.ok = problems.length === 0;
    return result;
  } finally {
    await scanner?.stop();
    await proc?.stop().catch((err: unknown) => log(`restore ${n(keys)}: ${String(err)}`));
    await admin
      .deleteTopics({ topics: [d.eventsTopic, d.commandsTopic, d.changelogTopic, d.resultsTopic, d.deadLetterTopic] })
      .catch(() => undefined);
  }
}

/**
 * What must hold for the figures of one size to mean what they say, from the figures alone (so
 * a stored run can be judged again): every reader saw every record, the processor's stores hold
 * every entity, the sweep matched the seeded state and every match was applied.
 */
export function checkStateSize(r: StateSizeResult): string[] {
  const out: string[] = [];
  const of = (x: number) => `${n(x)} of ${n(r.keys)}`;
  // The read after the sweep also sees the records the sweep's commands added.
  r.bare.forEach((b, i) => {
    if (i < 3 ? b.records !== r.keys : b.records < r.keys)
      out.push(`a bare read (${b.settings}) saw ${of(b.records)} records`);
  });
  if (r.processor.records !== r.keys || r.processor.metricRecords !== r.keys) {
    out.push(
      `the processor's restore replayed ${of(r.processor.records)} records (processor_restore_records_total ${n(r.processor.metricRecords)}), yet every task went RUNNING`,
    );
  }
  const stored = r.processor.storeEntities?.reduce((a, b) => a + b, 0);
  if (stored !== undefined && stored !== r.keys) {
    out.push(
      `the processor's stores hold ${of(stored)} entities (per task: ${r.processor.storeEntities!.map(n).join(', ')})`,
    );
  }
  if (r.scanner.records !== r.keys || r.scanner.lag !== 0)
    out.push(`the scanner's replica applied ${of(r.scanner.records)} records (lag ${n(r.scanner.lag)} when ready)`);
  if (r.sweep.matched !== r.sweep.expectedMatches)
    out.push(`the sweep matched ${n(r.sweep.matched)} keys; the seeded state has ${n(r.sweep.expectedMatches)}`);
  if (r.sweep.applied !== r.sweep.matched)
    out.push(`the processor applied ${n(r.sweep.applied)} of the sweep's ${n(r.sweep.matched)} commands`);
  return out;
}

/** Entities in each task store of a stopped processor. */
function countStores(stateDir: string, partitions: number): number[] {
  return Array.from({ length: partitions }, (_, task) => {
    const store = TaskStore.open({ dir: stateDir, task });
    try {
      return store.count();
    } finally {
      store.close();
    }
  });
}

/** A scanner with info logs, and the times of its replica's group join and catch-up (from its log lines). */
async function startScanner(
  d: Deployment,
  brokers: string[],
  nice: number,
): Promise<{ scanner: ScannerProcess; times: () => { joinedAt: number; caughtUpAt: number } }> {
  const scanner = await ScannerProcess.start(d, brokers, { maxCommandLag: 10_000, nice, logLevel: 'info' });
  let joinedAt = NaN;
  let caughtUpAt = NaN;
  const off = scanner.onLog((line: ScannerLogLine) => {
    if (line.msg === 'replica follower joined; resuming from SQLite offsets' && Number.isNaN(joinedAt))
      joinedAt = line.time;
    if (line.msg === 'replica caught up with the changelog' && Number.isNaN(caughtUpAt)) {
      caughtUpAt = line.time;
      off();
    }
  });
  return { scanner, times: () => ({ joinedAt, caughtUpAt }) };
}

/** The processor's highest JS heap reported until stop(). */
function heapWatch(proc: ProcessorRun): { stop: () => number } {
  let max = 0;
  const off = proc.child.on((m) => {
    if (m.type === 'memory') max = Math.max(max, Number(m.heapUsed));
  });
  return {
    stop: () => {
      off();
      return max;
    },
  };
}

/** The scanner's JS heap in use, from its /metrics every second, until stop(). */
function scannerHeapWatch(scanner: ScannerProcess): { stop: () => Promise<number> } {
  let max = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const text = await scanner.metricsText().catch(() => '');
      const name = metricNamed(text, SCANNER_METRICS.heap);
      if (name) max = Math.max(max, metricSum(text, name));
      await new Promise((r) => setTimeout(r, 1_000));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return max;
    },
  };
}

/** The first metric of a Prometheus text whose name matches (from its `# TYPE` line). */
function metricNamed(text: string, pattern: RegExp): string | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith('# TYPE ')) continue;
    const name = line.split(' ')[2]!;
    if (pattern.test(name)) return name;
  }
  return undefined;
}

function rate(records: number, ms: number): number {
  return ms > 0 ? (records * 1000) / ms : NaN;
}

function n(v: number): string {
  return v.toLocaleString('en-US');
}
