import type { EntityDomain } from '@state-relay/accounts';
import { assertCoPartitioned, CoPartitionedAssigner, ensureTopics, isFencedError, tasksOf } from '@state-relay/kafka-runtime';
import { Consumer, Kafka, logLevel as kafkaLogLevel, type LogEntry } from 'kafkajs';
import type { Logger } from 'pino';
import type { ProcessorConfig } from './config';
import type { ProcessorMetrics } from './metrics';
import type { BatchOutcome, InputBatch, Task } from './task';
import { TaskRegistry } from './task-registry';

export interface ProcessorDeps {
  config: ProcessorConfig;
  domain: EntityDomain;
  logger: Logger;
  metrics: ProcessorMetrics;
  /** Called when the consumer stopped for good; the process should exit non-zero. */
  onFatal?: (err: Error) => void;
  /**
   * Benchmark-only (bench/, with in-loop-sweep.ts): runs inside the task's exclusive section
   * right after each batch's transaction committed. The service never sets it.
   */
  betweenBatches?: (task: Task, batch: InputBatch, outcome: BatchOutcome) => Promise<void>;
}

/** Record-batch limit of the dead-letter topic (the broker default is 1 MB). */
const DEAD_LETTER_MAX_BYTES = 8 * 1024 * 1024;

/** kafkajs log lines into pino, one level down: kafkajs is loud about retried errors. */
export function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, ...extra } = log;
      const child = { kafkajs: extra };
      if (level === kafkaLogLevel.ERROR) logger.warn(child, message);
      else if (level === kafkaLogLevel.WARN) logger.info(child, message);
      else logger.debug(child, message);
    };
}

/**
 * The owner of the state: consumes the events and commands topics as one consumer group
 * with the co-partitioned assigner, and runs each partition's batches through its task.
 */
export class Processor {
  readonly kafka: Kafka;
  readonly tasks: TaskRegistry;
  private consumer?: Consumer;
  private joined = false;
  private stopping = false;
  private storeMetricsTimer?: NodeJS.Timeout;
  readonly groupId: string;

  constructor(private readonly deps: ProcessorDeps) {
    const { config, logger } = deps;
    this.groupId = config.appId;
    this.kafka = new Kafka({
      clientId: `${config.appId}-processor`,
      brokers: config.brokers,
      logCreator: kafkaLogCreator(logger.child({ component: 'kafkajs' })),
      retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 10_000 },
    });
    this.tasks = new TaskRegistry({
      kafka: this.kafka,
      appId: config.appId,
      groupId: this.groupId,
      stateDir: config.stateDir,
      topics: {
        events: config.eventsTopic,
        commands: config.commandsTopic,
        results: config.resultsTopic,
        deadLetter: config.deadLetterTopic,
        changelog: config.changelogTopic,
      },
      domain: deps.domain,
      logger,
      metrics: deps.metrics,
      transactionTimeoutMs: config.transactionTimeoutMs,
    });
  }

  /** Ready when the group has been joined and no owned task is restoring. */
  get isReady(): boolean {
    return this.joined && !this.tasks.isRestoring && !this.stopping;
  }

  /** Creates missing topics, refuses non-co-partitioned inputs, joins the group. */
  async start(): Promise<void> {
    const { config, logger, metrics } = this.deps;
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const created = await ensureTopics(admin, [
        { topic: config.eventsTopic, partitions: config.partitions },
        { topic: config.commandsTopic, partitions: config.partitions },
        { topic: config.changelogTopic, partitions: config.partitions, compacted: true },
        { topic: config.resultsTopic, partitions: config.partitions },
        // A dead letter is the original record plus ~250 bytes of dlq.* headers: an input the
        // broker accepted at its 1 MB limit must still fit here.
        { topic: config.deadLetterTopic, partitions: 1, configs: { 'max.message.bytes': String(DEAD_LETTER_MAX_BYTES) } },
      ]);
      if (created.length > 0) logger.info({ topics: created }, 'created missing topics');
      const inputs = await assertCoPartitioned(admin, [config.eventsTopic, config.commandsTopic]);
      const changelog = await assertCoPartitioned(admin, [config.eventsTopic, config.changelogTopic]).catch(() => -1);
      if (changelog !== inputs) {
        throw new Error(`changelog ${config.changelogTopic} must have as many partitions as ${config.eventsTopic} (${inputs})`);
      }
    } finally {
      await admin.disconnect();
    }

    const consumer = this.kafka.consumer({
      groupId: this.groupId,
      partitionAssigners: [CoPartitionedAssigner],
      readUncommitted: false,
      sessionTimeout: config.sessionTimeoutMs,
      heartbeatInterval: Math.floor(config.sessionTimeoutMs / 10),
      maxWaitTimeInMs: 100,
      maxBytesPerPartition: 2 * 1024 * 1024,
      retry: { retries: 10 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      const owned = tasksOf(payload.memberAssignment);
      this.joined = true;
      logger.info({ tasks: owned, generation: payload.groupId }, 'joined the group');
      // Partitions paused after a fencing are ours again (or gone): consume them normally.
      consumer.resume(Object.entries(payload.memberAssignment).map(([topic, partitions]) => ({ topic, partitions })));
      this.tasks.assign(owned).catch((err: unknown) => logger.error({ err }, 'preparing assigned tasks failed'));
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed');
      // kafkajs gives up on non-retriable errors: without a consumer this instance is useless,
      // so let the orchestrator restart it (Kafka Streams' thread death, same answer).
      if (!payload.restart && !this.stopping) this.deps.onFatal?.(payload.error);
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [config.eventsTopic, config.commandsTopic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: config.concurrency,
      eachBatch: async ({ batch, heartbeat, resolveOffset, isRunning, isStale }) => {
        if (!isRunning() || isStale() || batch.messages.length === 0) return;
        const started = process.hrtime.bigint();
        try {
          const task = await withHeartbeat(this.tasks.acquire(batch.partition), heartbeat);
          await task.exclusive(async () => {
            const input = {
              topic: batch.topic,
              partition: batch.partition,
              messages: batch.messages,
              lastOffset: batch.lastOffset(),
            };
            const outcome = await task.process(input);
            await this.deps.betweenBatches?.(task, input, outcome);
          });
        } catch (err) {
          // Never rethrow to kafkajs: it would retry this batch from its in-memory position
          // (wrong if the commit actually succeeded) or stop consuming for good.
          await withHeartbeat(this.recover(batch.topic, batch.partition, err), heartbeat);
          return;
        }
        metrics.batchSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
        metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Number(batch.offsetLag()));
        resolveOffset(batch.lastOffset());
        await heartbeat();
      },
    });
    this.storeMetricsTimer = setInterval(() => {
      this.tasks.forEachReady((t) => t.refreshStoreMetrics()).catch(() => undefined);
    }, 5_000);
    this.storeMetricsTimer.unref();
  }

  /**
   * After a failed batch nothing of it is visible, or — if the commit succeeded but its
   * answer was lost, or SQLite failed after it — all of it is. Either way the truth is in
   * Kafka: drop the task (its store is restored from the changelog on next use), re-own its
   * transactional id (which completes any pending transaction), and re-read the partition
   * from the group's committed offset. A fenced task belongs to another instance now: pause
   * it until the rebalance takes it away.
   */
  private async recover(topic: string, partition: number, err: unknown): Promise<void> {
    const { config, logger } = this.deps;
    const consumer = this.consumer!;
    const fenced = isFencedError(err);
    logger.warn({ err, task: partition, topic, fenced }, 'batch failed; transaction aborted, recovering the task');
    await this.tasks.release(partition);
    const both = [
      { topic: config.eventsTopic, partitions: [partition] },
      { topic: config.commandsTopic, partitions: [partition] },
    ];
    if (fenced) {
      consumer.pause(both);
      return;
    }
    try {
      await this.tasks.acquire(partition);
      consumer.seek({ topic, partition, offset: await this.committedOffset(topic, partition) });
    } catch (retryErr) {
      logger.warn({ err: retryErr, task: partition }, 'task recovery failed; pausing it and retrying shortly');
      consumer.pause(both);
      setTimeout(() => {
        if (this.stopping) return;
        this.recover(topic, partition, retryErr)
          .then(() => consumer.resume(both))
          .catch(() => undefined);
      }, 2_000).unref();
    }
  }

  private async committedOffset(topic: string, partition: number): Promise<string> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const [committed] = await admin.fetchOffsets({ groupId: this.groupId, topics: [topic] });
      const offset = committed?.partitions.find((p) => p.partition === partition)?.offset ?? '-1';
      if (offset !== '-1') return offset;
      const low = (await admin.fetchTopicOffsets(topic)).find((o) => o.partition === partition)?.low ?? '0';
      return low;
    } finally {
      await admin.disconnect();
    }
  }

  /** Leaves the group after the running batches; every task closes its store and producer. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.storeMetricsTimer) clearInterval(this.storeMetricsTimer);
    await this.consumer?.disconnect().catch((err: unknown) => this.deps.logger.warn({ err }, 'consumer disconnect failed'));
    await this.tasks.closeAll();
  }
}

/** Awaits `work`, heartbeating meanwhile so a long restore does not cost the group membership. */
async function withHeartbeat<T>(work: Promise<T>, heartbeat: () => Promise<void>): Promise<T> {
  let done = false;
  const beat = (async () => {
    while (!done) {
      await new Promise((r) => setTimeout(r, 1_000));
      if (!done) await heartbeat().catch(() => undefined);
    }
  })();
  try {
    return await work;
  } finally {
    done = true;
    void beat;
  }
}
