import type { EntityDomain } from '@state-relay/domain';
import {
  assertCoPartitioned,
  CoPartitionedAssigner,
  deleteRetentionMs,
  ensureTopics,
  retireConsumer,
  tasksOf,
  watchConsumer,
  type ConsumerDeath,
  type ConsumerWatch,
} from '@state-relay/kafka-runtime';
import type { TaskStore } from '@state-relay/store';
import { createKafkaClient } from '@state-relay/service-kit';
import type { Admin, Consumer, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { ProcessorConfig } from './config';
import type { ProcessorMetrics } from './metrics';
import { kafkaPorts } from './tasks/kafka-ports';
import { TaskLifecycle } from './tasks/lifecycle';
import type { CommitReport, InputBatch, Task } from './tasks/task';

/**
 * Observers the benchmark plugs in (bench/); the service sets none. `afterFold` runs inside
 * the fetch loop after a batch was folded (what a punctuator would stall); `onCommit` sees
 * every committed transaction.
 */
export interface ProcessorHooks {
  afterFold?: (task: Task, batch: InputBatch) => void | Promise<void>;
  onCommit?: (report: CommitReport) => void;
}

export interface ProcessorDeps {
  config: ProcessorConfig;
  domain: EntityDomain;
  logger: Logger;
  metrics: ProcessorMetrics;
  hooks?: ProcessorHooks;
  /** Tests inject a failing store here. */
  openStore?: (dir: string, task: number) => TaskStore;
}

/** What the HTTP surface and the benchmark see of the tasks. */
export type TaskView = Pick<TaskLifecycle, 'owned' | 'read' | 'stateOf'>;
const NO_TASKS: TaskView = { owned: [], read: () => undefined, stateOf: () => undefined };

/** kafkajs's default rebalance timeout, set explicitly: the stall watch must outlast a join. */
const REBALANCE_TIMEOUT_MS = 60_000;
/** No fetch, join or rebalance for this long: the consumer is hung (a join takes at most the rebalance timeout). */
const CONSUMER_STALL_MS = REBALANCE_TIMEOUT_MS + 30_000;

/** Record-batch limit of the dead-letter topic (the broker default is 1 MB). */
const DEAD_LETTER_MAX_BYTES = 8 * 1024 * 1024;

// The kafkajs→pino bridge moved to the service kit; re-exported for anything importing it from here.
export { kafkaLogCreator } from '@state-relay/service-kit';

/**
 * The owner of the state: consumes the events and commands topics as one consumer group
 * with the co-partitioned assigner; the task lifecycle turns each assigned partition pair
 * into a task that folds what is fetched and commits once per interval.
 */
export class Processor {
  readonly kafka: Kafka;
  readonly groupId: string;
  private readonly inputTopics: readonly string[];
  private consumer?: Consumer;
  private admin?: Admin;
  private lifecycle?: TaskLifecycle;
  private joined = false;
  private stopping = false;
  private storeMetricsTimer?: NodeJS.Timeout;
  private watch?: ConsumerWatch;
  /** Consumer replacements since the last successful join. */
  private replacements = 0;

  constructor(private readonly deps: ProcessorDeps) {
    const { config, logger } = deps;
    this.groupId = config.appId;
    this.inputTopics = [config.eventsTopic, config.commandsTopic];
    this.kafka = createKafkaClient({ clientId: `${config.appId}-processor`, brokers: config.brokers, logger });
  }

  /** Ready when the group has been joined and every assigned task is RUNNING. */
  get isReady(): boolean {
    return this.joined && !this.stopping && (this.lifecycle?.allRunning ?? false);
  }

  /** The tasks of the current assignment (none before start). */
  get tasks(): TaskView {
    return this.lifecycle ?? NO_TASKS;
  }

  /** Creates missing topics, refuses non-co-partitioned inputs, joins the group. */
  async start(): Promise<void> {
    const { config, logger, metrics } = this.deps;
    const admin = this.kafka.admin();
    this.admin = admin;
    await admin.connect();
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
      throw new Error(
        `changelog ${config.changelogTopic} must have as many partitions as ${config.eventsTopic} (${inputs})`,
      );
    }
    const retention = await deleteRetentionMs(admin, config.changelogTopic);

    const inputTopics = this.inputTopics;
    this.lifecycle = new TaskLifecycle({
      ports: kafkaPorts({
        kafka: this.kafka,
        admin,
        consumer: () => this.consumer!,
        appId: config.appId,
        groupId: this.groupId,
        stateDir: config.stateDir,
        changelogTopic: config.changelogTopic,
        inputTopics,
        transactionTimeoutMs: config.transactionTimeoutMs,
        ...(this.deps.openStore ? { openStore: this.deps.openStore } : {}),
      }),
      deleteRetentionMs: retention,
      inputTopics,
      task: {
        domain: this.deps.domain,
        topics: {
          events: config.eventsTopic,
          commands: config.commandsTopic,
          results: config.resultsTopic,
          deadLetter: config.deadLetterTopic,
          changelog: config.changelogTopic,
        },
        groupId: this.groupId,
        logger,
        metrics,
        commitIntervalMs: config.commitIntervalMs,
        commitMaxRecords: config.commitMaxRecords,
        maxUncommittedRecords: config.maxUncommittedRecords,
        ...(this.deps.hooks?.onCommit ? { onCommit: this.deps.hooks.onCommit } : {}),
      },
    });
    await this.runConsumer();
    const lifecycle = this.lifecycle;
    this.storeMetricsTimer = setInterval(() => lifecycle.forEachTask((t) => t.refreshStoreMetrics()), 5_000);
    this.storeMetricsTimer.unref();
  }

  /**
   * Creates, joins and runs the group consumer, watched: if kafkajs gives up on it (a CRASH it
   * will not restart from) or it hangs, it is replaced in this process. The tasks live on: their
   * producers and stores do not depend on the consumer, and the new member's first GROUP_JOIN
   * re-seeks every RUNNING task to its own position (kafkajs would start at the committed offsets).
   */
  private async runConsumer(): Promise<void> {
    const { config, logger, metrics } = this.deps;
    const lifecycle = this.lifecycle!;
    const consumer = this.kafka.consumer({
      groupId: this.groupId,
      partitionAssigners: [CoPartitionedAssigner],
      readUncommitted: false,
      sessionTimeout: config.sessionTimeoutMs,
      rebalanceTimeout: REBALANCE_TIMEOUT_MS,
      heartbeatInterval: Math.floor(config.sessionTimeoutMs / 10),
      maxWaitTimeInMs: 50,
      maxBytesPerPartition: config.fetchMaxBytesPerPartition,
      retry: { retries: 10 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      if (this.consumer !== consumer) return;
      const owned = tasksOf(payload.memberAssignment);
      this.joined = true;
      this.replacements = 0;
      logger.info({ tasks: owned, memberId: payload.memberId }, 'joined the group');
      lifecycle.onAssignment(payload.memberId, owned);
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed');
    });
    this.watch?.stop();
    this.watch = watchConsumer(consumer, {
      stallMs: CONSUMER_STALL_MS,
      onDead: (reason, err) => void this.replaceConsumer(consumer, reason, err),
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [...this.inputTopics], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: config.concurrency,
      eachBatch: async ({ batch, resolveOffset, isRunning, isStale }) => {
        // A batch fetched before a seek, or for a task that is not RUNNING in the current
        // assignment, is dropped unresolved: kafkajs fetches it again from where the task resumes.
        if (!isRunning() || isStale() || this.consumer !== consumer) return;
        const task = lifecycle.runningTask(batch.partition);
        if (!task) return;
        const input: InputBatch = {
          topic: batch.topic,
          partition: batch.partition,
          messages: batch.messages,
          lastOffset: batch.lastOffset(),
        };
        if (!(await task.foldBatch(input))) return;
        resolveOffset(batch.lastOffset());
        metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Number(batch.offsetLag()));
        await this.deps.hooks?.afterFold?.(task, input);
      },
    });
  }

  /**
   * Replaces a dead consumer (see runConsumer) after a back-off that grows while replacements
   * fail to join (1 s doubling to 30 s). It never gives up: an instance without a consumer is
   * not ready (/readyz 503) and keeps trying, as kafkajs does for retriable errors; exiting
   * would only trade this loop for the orchestrator's.
   */
  private async replaceConsumer(old: Consumer, reason: ConsumerDeath, err?: Error): Promise<void> {
    if (this.stopping || this.consumer !== old) return;
    const { logger, metrics } = this.deps;
    this.replacements++;
    this.joined = false; // not ready until the replacement has joined
    metrics.consumerReplacements.inc({ reason });
    logger.warn(
      { err, reason, attempt: this.replacements },
      reason === 'crashed'
        ? 'kafkajs gave up on the consumer; replacing it'
        : `the consumer made no fetch for ${CONSUMER_STALL_MS / 1000} s; replacing it`,
    );
    await retireConsumer(old, this.replacements);
    if (this.stopping || this.consumer !== old) return;
    try {
      await this.runConsumer();
    } catch (failure) {
      this.watch?.stop(); // this attempt's watch must not replace it a second time
      const current = this.consumer;
      if (current) void this.replaceConsumer(current, 'crashed', failure instanceof Error ? failure : undefined);
    }
  }

  /** Commits what every task holds, leaves the group, closes every task (state files kept). */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.storeMetricsTimer) clearInterval(this.storeMetricsTimer);
    this.watch?.stop();
    await this.lifecycle?.drain();
    await this.consumer
      ?.disconnect()
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'consumer disconnect failed'));
    await this.lifecycle?.closeAll();
    await this.admin?.disconnect().catch(() => undefined);
  }
}
