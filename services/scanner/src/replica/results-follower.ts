import { commandIdFor, decodeCommandResult, isDecodeError, type CommandResult } from '@state-relay/contracts';
import { retireConsumer, watchConsumer, type ConsumerDeath, type ConsumerWatch } from '@state-relay/kafka-runtime';
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { ScannerMetrics } from '../metrics';
import type { ScanStore } from '../scans/scan-store';

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
 * A consumer kafkajs gave up on, or one that made no fetch for this long, is replaced (see
 * watchConsumer; tulios/kafkajs#659: seen here as a scan waiting for results the processor had
 * long committed). Re-reading results is harmless: each is recorded once (INSERT OR IGNORE).
 */
const STALL_MS = 30_000;

export class ResultsFollower {
  private consumer?: Consumer;
  private watch?: ConsumerWatch;
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
    this.watch = watchConsumer(consumer, {
      stallMs: STALL_MS,
      onDead: (reason) => void this.replace(consumer, reason),
    });
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

  private async replace(old: Consumer, reason: ConsumerDeath, attempt = 1): Promise<void> {
    if (this.stopped || this.consumer !== old) return;
    this.deps.logger.warn({ reason, attempt }, `results follower consumer ${reason}; replacing it`);
    this.deps.metrics.consumerReplacements.inc({ consumer: 'results', reason });
    await retireConsumer(old, attempt);
    if (this.stopped || this.consumer !== old) return;
    try {
      await this.start();
    } catch (err) {
      this.deps.logger.warn({ err }, 'replacing the results follower consumer failed; trying again');
      this.watch?.stop(); // this attempt's watch must not replace it a second time
      void this.replace(this.consumer ?? old, 'crashed', attempt + 1);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watch?.stop();
    await this.consumer
      ?.disconnect()
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'results consumer disconnect failed'));
  }
}
