import {
  CoPartitionedAssigner,
  OWNER_REPLACES,
  retireConsumer,
  tasksOf,
  watchConsumer,
  type ConsumerDeath,
  type ConsumerWatch,
} from '@state-relay/kafka-runtime';
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { ProcessorConfig } from '../config';
import type { ProcessorMetrics } from '../metrics';
import type { TaskLifecycle } from '../tasks/lifecycle';
import type { InputBatch, TaskContext } from '../extension';

/** kafkajs's default rebalance timeout, set explicitly: the stall watch must outlast a join. */
const REBALANCE_TIMEOUT_MS = 60_000;
/** No fetch, join or rebalance for this long: the consumer is hung (a join takes at most the rebalance timeout). */
const CONSUMER_STALL_MS = REBALANCE_TIMEOUT_MS + 30_000;

export interface GroupConsumerDeps {
  kafka: Kafka;
  groupId: string;
  inputTopics: readonly string[];
  config: Pick<ProcessorConfig, 'sessionTimeoutMs' | 'fetchMaxBytesPerPartition' | 'concurrency'>;
  lifecycle: TaskLifecycle;
  logger: Logger;
  metrics: ProcessorMetrics;
  /** The processor is stopping: a dead consumer is no longer replaced. */
  stopping: () => boolean;
  /** ProcessingExtension.afterBatch: awaited inside the fetch loop after a batch was folded into its task. */
  afterBatch?: (task: TaskContext, batch: InputBatch) => void | Promise<void>;
  /**
   * Whether the group coordinator counts `memberId` as a member now ('unknown' while the group
   * rebalances or the answer fails). Checked every session timeout; see watchMembership.
   */
  membership?: (memberId: string) => Promise<'member' | 'absent' | 'unknown'>;
}

/**
 * The consumer loop: one group consumer over both inputs with the co-partitioned assigner.
 * Each generation's assignment goes to the task lifecycle; each fetched batch is folded by its
 * RUNNING task. Recovery: a consumer kafkajs gives up on, or that hangs, is replaced in this
 * process (see run and replace).
 */
export class GroupConsumer {
  private consumer?: Consumer;
  private watch?: ConsumerWatch;
  private joinedGroup = false;
  private memberId?: string;
  /** Consecutive membership checks that found this member absent from a settled group. */
  private absences = 0;
  private membershipTimer?: NodeJS.Timeout;
  /** Consumer replacements since the last successful join. */
  private replacements = 0;
  /** The current consumer's `consumer.run()` (settles once it has joined or crashed). */
  private running?: Promise<void>;

  constructor(private readonly deps: GroupConsumerDeps) {}

  /** The consumer in use now (the lifecycle pauses, resumes and seeks through it). */
  get current(): Consumer {
    return this.consumer!;
  }

  /** The group has been joined, and the consumer has not been lost since. */
  get joined(): boolean {
    return this.joinedGroup;
  }

  /**
   * Creates, joins and runs the group consumer, watched: if kafkajs gives up on it or it hangs, it
   * is replaced in this process while the tasks keep their producers and stores (see DECISIONS.md,
   * 'The group consumer is replaced in-process').
   */
  async run(): Promise<void> {
    const { kafka, groupId, inputTopics, config, lifecycle, logger, metrics } = this.deps;
    const consumer = kafka.consumer({
      groupId,
      partitionAssigners: [CoPartitionedAssigner],
      readUncommitted: false,
      sessionTimeout: config.sessionTimeoutMs,
      rebalanceTimeout: REBALANCE_TIMEOUT_MS,
      heartbeatInterval: Math.floor(config.sessionTimeoutMs / 10),
      maxWaitTimeInMs: 50,
      maxBytesPerPartition: config.fetchMaxBytesPerPartition,
      // A crash is final; the watch below replaces the consumer (see OWNER_REPLACES).
      retry: { retries: 10, ...OWNER_REPLACES },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      if (this.consumer !== consumer) return;
      const owned = tasksOf(payload.memberAssignment);
      this.joinedGroup = true;
      this.replacements = 0;
      this.memberId = payload.memberId;
      this.absences = 0;
      logger.info({ tasks: owned, memberId: payload.memberId }, 'joined the group');
      lifecycle.onAssignment(payload.memberId, owned, payload.generationId);
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed');
    });
    this.watch?.stop();
    this.watch = watchConsumer(consumer, {
      stallMs: CONSUMER_STALL_MS,
      onDead: (reason, err) => void this.replace(consumer, reason, err),
    });
    this.watchMembership();
    await consumer.connect();
    await consumer.subscribe({ topics: [...inputTopics], fromBeginning: true });
    this.running = consumer.run({
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
        await this.deps.afterBatch?.(task, input);
      },
    });
    await this.running;
  }

  /**
   * Replaces a dead consumer (see run) after a back-off that grows while replacements fail to join
   * (1 s doubling to 30 s). Never gives up: exiting would only trade this loop for the orchestrator's.
   */
  private async replace(old: Consumer, reason: ConsumerDeath, err?: Error): Promise<void> {
    if (this.deps.stopping() || this.consumer !== old) return;
    const { logger, metrics } = this.deps;
    this.replacements++;
    this.joinedGroup = false; // not ready until the replacement has joined
    metrics.consumerReplacements.inc({ reason });
    logger.warn(
      { err, reason, attempt: this.replacements },
      reason === 'crashed'
        ? 'kafkajs gave up on the consumer; replacing it'
        : reason === 'evicted'
          ? 'the group no longer counts this consumer as a member and it has not rejoined; replacing it'
          : `the consumer made no fetch for ${CONSUMER_STALL_MS / 1000} s; replacing it`,
    );
    await retireConsumer(old, this.replacements, undefined, this.running);
    if (this.deps.stopping() || this.consumer !== old) return;
    try {
      await this.run();
    } catch (failure) {
      this.watch?.stop(); // this attempt's watch must not replace it a second time
      const current = this.consumer;
      if (current) void this.replace(current, 'crashed', failure instanceof Error ? failure : undefined);
    }
  }

  /**
   * Replaces a consumer the coordinator no longer counts (absent from a settled group twice in a
   * row, a session timeout apart): an evicted member with every task paused is invisible to the
   * stall watch (see DECISIONS.md, 'An evicted member is found by asking the coordinator').
   */
  private watchMembership(): void {
    const { membership, config } = this.deps;
    if (!membership || this.membershipTimer) return;
    const every = Math.max(1_000, config.sessionTimeoutMs);
    let checking = false;
    this.membershipTimer = setInterval(() => {
      const consumer = this.consumer;
      const memberId = this.memberId;
      if (checking || !consumer || !memberId || !this.joinedGroup || this.deps.stopping()) return;
      checking = true;
      void membership(memberId)
        .then((answer) => {
          if (this.consumer !== consumer || this.memberId !== memberId) return;
          this.absences = answer === 'absent' ? this.absences + 1 : answer === 'member' ? 0 : this.absences;
          if (this.absences >= 2) {
            this.absences = 0;
            this.watch?.stop();
            void this.replace(consumer, 'evicted');
          }
        })
        .catch(() => undefined) // an unanswered check is no verdict
        .finally(() => (checking = false));
    }, every);
    this.membershipTimer.unref();
  }

  /** Graceful stop, step 1 (with deps.stopping() true): the watch ends; the consumer runs on until disconnect. */
  stopWatching(): void {
    this.watch?.stop();
    clearInterval(this.membershipTimer);
    this.membershipTimer = undefined;
  }

  /** Graceful stop, step 2 (the tasks drained): leaves the group. */
  async disconnect(): Promise<void> {
    await this.consumer
      ?.disconnect()
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'consumer disconnect failed'));
  }
}
