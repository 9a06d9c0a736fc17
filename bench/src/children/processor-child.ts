import { runChild, type ChildMessage } from '../ipc';
import { instrumentTransactions, type TransactionTiming } from './transaction-timing';
import {
  accountsDomain,
  createProcessorMetrics,
  DORMANCY_SWEEP,
  InLoopSweep,
  loadConfig,
  pino,
  Processor,
  type BatchOutcome,
  type InputBatch,
  type Task,
} from '../lib';

export interface ProcessorChildConfig {
  brokers: string[];
  appId: string;
  eventsTopic: string;
  commandsTopic: string;
  resultsTopic: string;
  deadLetterTopic: string;
  partitions: number;
  stateDir: string;
  /** Extra environment for loadConfig (bench --processor-env). */
  env: Record<string, string>;
  /** What-if (bench --tx-retry-ms): the retry start of every transactional producer. */
  txRetryMs?: number;
}

/** What the child reports every 250 ms: one entry per committed batch, plus each event's latency. */
export interface BatchReport extends ChildMessage {
  type: 'batches';
  /** Event batches: commit time (epoch ms), task, records; `latency` holds each event's commit − produce time. */
  committedAt: number[];
  task: number[];
  records: number[];
  latency: number[];
  /** Command batches: commit time and records. */
  commandCommittedAt: number[];
  commandRecords: number[];
  /** Every batch (either input): fetch-to-done time in ms, as the processor's batch histogram sees it. */
  batchMs: number[];
  /** Every committed transaction of the task producers (batches and in-loop slices alike). */
  transactions: TransactionTiming[];
}

export interface SweepCommand extends ChildMessage {
  type: 'sweep';
  sweepId: string;
  asOf: number;
  /** Infinity (sent as null over IPC) for the blocking sweep. */
  keysPerSlice: number | null;
}

/**
 * A real Processor (the service's class and defaults), plus the benchmark hook: event-to-commit
 * latency per event from the batch's commit time and each record's produce timestamp, and
 * the in-loop sweep when the parent asks for one.
 */
runChild<ProcessorChildConfig>(async (cfg, send) => {
  const config = loadConfig({
    KAFKA_BROKERS: cfg.brokers.join(','),
    APP_ID: cfg.appId,
    EVENTS_TOPIC: cfg.eventsTopic,
    COMMANDS_TOPIC: cfg.commandsTopic,
    RESULTS_TOPIC: cfg.resultsTopic,
    DEAD_LETTER_TOPIC: cfg.deadLetterTopic,
    PARTITIONS: String(cfg.partitions),
    STATE_DIR: cfg.stateDir,
    LOG_LEVEL: 'info',
    ...cfg.env,
  });
  // pino into a stream that picks out the restore summaries and passes on warnings.
  const logger = pino(
    { level: 'info', base: { service: 'processor', app: cfg.appId } },
    {
      write(line: string) {
        const entry = JSON.parse(line) as {
          level: number;
          msg: string;
          records?: number;
          ms?: number;
          tasks?: number[];
        };
        if (entry.msg === 'tasks restored from the changelog' || entry.msg === 'tasks ready (stores were up to date)') {
          send({ type: 'restored', records: entry.records ?? 0, ms: entry.ms ?? 0, tasks: entry.tasks ?? [] });
        }
        if (entry.level >= 40) {
          process.stderr.write(line);
          send({ type: 'warning', msg: entry.msg });
        }
      },
    },
  );
  const metrics = createProcessorMetrics();
  let report = emptyReport();
  instrumentTransactions((t) => report.transactions.push(t), cfg.txRetryMs);
  const observeBatch = metrics.batchSeconds.observe.bind(metrics.batchSeconds) as (v: number) => void;
  (metrics.batchSeconds as { observe: (v: number) => void }).observe = (seconds: number) => {
    report.batchMs.push(seconds * 1000);
    observeBatch(seconds);
  };

  let sweep: InLoopSweep | undefined;
  const betweenBatches = async (task: Task, batch: InputBatch, outcome: BatchOutcome): Promise<void> => {
    if (batch.topic === config.eventsTopic) {
      report.committedAt.push(outcome.committedAt);
      report.task.push(task.id);
      report.records.push(batch.messages.length);
      for (const m of batch.messages) report.latency.push(outcome.committedAt - Number(m.timestamp));
    } else {
      report.commandCommittedAt.push(outcome.committedAt);
      report.commandRecords.push(batch.messages.length);
    }
    if (sweep) await sweep.slice(task);
  };

  const processor = new Processor({ config, domain: accountsDomain, logger, metrics, betweenBatches });
  const flush = setInterval(() => {
    const { heapUsed, external, arrayBuffers } = process.memoryUsage();
    send({ type: 'memory', heapUsed, external: external + arrayBuffers });
    if (
      report.committedAt.length +
        report.commandCommittedAt.length +
        report.batchMs.length +
        report.transactions.length ===
      0
    )
      return;
    send(report);
    report = emptyReport();
  }, 250);

  process.on('message', (m: ChildMessage) => {
    if (m.type === 'sweep') {
      const s = m as SweepCommand;
      const armedAt = Date.now();
      const current = new InLoopSweep({
        sweepId: s.sweepId,
        condition: DORMANCY_SWEEP.condition,
        action: DORMANCY_SWEEP.action,
        asOf: s.asOf,
        keysPerSlice: s.keysPerSlice ?? Infinity,
        tasks: processor.tasks.owned,
      });
      sweep = current;
      void current.done.then(() => {
        if (sweep === current) sweep = undefined;
        send({ type: 'sweep-done', armedAt, doneAt: Date.now(), ...current.progress });
      });
    } else if (m.type === 'stop') {
      clearInterval(flush);
      void processor.stop().then(() => {
        send(report);
        send({ type: 'stopped' });
        setTimeout(() => process.exit(0), 50);
      });
    }
  });

  await processor.start();
  const ready = setInterval(() => {
    if (processor.isReady && processor.tasks.owned.length === cfg.partitions) {
      clearInterval(ready);
      send({ type: 'ready', at: Date.now() });
    }
  }, 20);
});

function emptyReport(): BatchReport {
  return {
    type: 'batches',
    committedAt: [],
    task: [],
    records: [],
    latency: [],
    commandCommittedAt: [],
    commandRecords: [],
    batchMs: [],
    transactions: [],
  };
}
