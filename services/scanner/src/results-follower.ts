import { commandIdFor, decodeCommandResult, isDecodeError, type CommandResult } from '@state-relay/contracts';
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { ScannerMetrics } from './metrics';
import type { ScanStore } from './scan-store';

export interface ResultsFollowerDeps {
  kafka: Kafka;
  topic: string;
  groupId: string;
  store: ScanStore;
  logger: Logger;
  metrics: ScannerMetrics;
  /** Called with the scans that got new results, after they are stored. */
  onResults(scanIds: string[]): void;
}

/**
 * Records the processor's command results (read_committed). Results are idempotent by command
 * id (the first one wins), so the group's committed offsets may lag or repeat without harm.
 */
/**
 * A consumer that has made no fetch for this long is restarted. kafkajs's consumer can hang
 * after a broker restart without a crash event (tulios/kafkajs#659: a batch whose processing
 * never ends); seen here as a scan waiting for results the processor had long committed.
 * Re-reading results is harmless: each is recorded once (INSERT OR IGNORE).
 */
const STALL_MS = 30_000;

export class ResultsFollower {
  private consumer?: Consumer;
  private lastFetchAt = Date.now();
  private watchdog?: NodeJS.Timeout;
  private restarting = false;
  private stopped = false;

  constructor(private readonly deps: ResultsFollowerDeps) {}

  async start(): Promise<void> {
    const { kafka, topic, groupId, store, logger, metrics } = this.deps;
    // A short session: after a crash the restarted scanner waits this long for its old member to expire.
    const consumer = kafka.consumer({
      groupId,
      readUncommitted: false,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 100,
      sessionTimeout: 10_000,
      heartbeatInterval: 1_000,
    });
    this.consumer = consumer;
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      logger.error({ err: payload.error, restart: payload.restart }, 'results follower crashed');
    });
    consumer.on(consumer.events.FETCH_START, () => {
      this.lastFetchAt = Date.now();
    });
    this.lastFetchAt = Date.now();
    this.watchdog ??= setInterval(() => void this.restartIfStalled(), 5_000);
    this.watchdog.unref();
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch, isRunning, heartbeat }) => {
        if (!isRunning()) return;
        const results: CommandResult[] = [];
        for (const m of batch.messages) {
          try {
            const result = decodeCommandResult(m.key, m.value);
            // Another emitter's command that reuses a scan id and key is not ours to count.
            if (result.commandId === commandIdFor(result.scanId, result.key)) results.push(result);
          } catch (err) {
            if (!isDecodeError(err)) throw err;
            metrics.undecodable.inc({ topic });
            logger.warn(
              { err, partition: batch.partition, offset: m.offset },
              'skipping an undecodable command result',
            );
          }
        }
        const recorded = store.recordResults(results);
        for (const r of recorded) metrics.results.inc({ outcome: r.outcome });
        if (recorded.length > 0) this.deps.onResults([...new Set(recorded.map((r) => r.scanId))]);
        await heartbeat();
      },
    });
  }

  private async restartIfStalled(): Promise<void> {
    const idleMs = Date.now() - this.lastFetchAt;
    if (this.stopped || this.restarting || idleMs < STALL_MS) return;
    this.restarting = true;
    this.deps.logger.warn({ idleMs }, 'results follower made no fetch for 30 s; restarting its consumer');
    try {
      // A hung consumer may never finish disconnecting; the group evicts it once its heartbeats stop.
      const old = this.consumer;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        old?.disconnect().catch(() => undefined),
        new Promise((resolve) => (timer = setTimeout(resolve, 10_000))),
      ]);
      clearTimeout(timer);
      if (!this.stopped) await this.start();
    } catch (err) {
      this.deps.logger.warn({ err }, 'restarting the results follower failed; trying again');
      this.lastFetchAt = Date.now();
    } finally {
      this.restarting = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.watchdog) clearInterval(this.watchdog);
    await this.consumer
      ?.disconnect()
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'results consumer disconnect failed'));
  }
}
