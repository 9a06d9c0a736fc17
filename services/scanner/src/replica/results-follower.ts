import { commandIdFor, decodeCommandResult, isDecodeError, type CommandResult } from '@state-relay/contracts';
import { OWNER_REPLACES, ReplacingConsumer } from '@state-relay/kafka-runtime';
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
 * A consumer kafkajs gave up on, or one that made no fetch for this long, is replaced; re-reading
 * results is harmless (INSERT OR IGNORE). See DECISIONS.md, "Followers replaced in-process".
 */
const STALL_MS = 30_000;

/**
 * Records the processor's command results (read_committed). Results are idempotent by command
 * id (the first one wins), so the group's committed offsets may lag or repeat without harm.
 */
export class ResultsFollower {
  private readonly consumer: ReplacingConsumer;

  constructor(private readonly deps: ResultsFollowerDeps) {
    const { kafka, groupId, logger, metrics } = deps;
    this.consumer = new ReplacingConsumer({
      what: 'results follower',
      stallMs: STALL_MS,
      logger,
      onReplacing: (reason) => metrics.consumerReplacements.inc({ consumer: 'results', reason }),
      create: () => {
        // A short session: after a crash the restarted scanner waits this long for its old member to expire.
        const consumer = kafka.consumer({
          groupId,
          readUncommitted: false,
          allowAutoTopicCreation: false,
          maxWaitTimeInMs: 100,
          sessionTimeout: 10_000,
          heartbeatInterval: 1_000,
          retry: OWNER_REPLACES, // the ReplacingConsumer replaces it; kafkajs must not restart it
        });
        consumer.on(consumer.events.CRASH, ({ payload }) => {
          logger.error({ err: payload.error, restart: payload.restart }, 'results follower crashed');
        });
        return consumer;
      },
      run: (consumer) => this.run(consumer),
    });
  }

  start(): Promise<void> {
    return this.consumer.start();
  }

  stop(): Promise<void> {
    return this.consumer.stop();
  }

  private async run(consumer: Consumer): Promise<void> {
    const { topic, store, logger, metrics } = this.deps;
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
}
