import {
  coPartitionedAssigner,
  OWNER_REPLACES,
  ReplacingConsumer,
  tasksOf,
  type ConsumerDeath,
  type DuplicateRefusal,
  type MemberIdentity,
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

/** The warning logged for each replacement, by its reason. */
const REPLACING: Record<ConsumerDeath, string> = {
  crashed: 'kafkajs gave up on the consumer; replacing it',
  evicted: 'the group no longer counts this consumer as a member and it has not rejoined; replacing it',
  stalled: `the consumer made no fetch for ${CONSUMER_STALL_MS / 1000} s; replacing it`,
};

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
  /** EXACTLY_ONCE=v2: this member's instance id and start, published to the group (its leader gives a duplicate nothing). */
  identity?: MemberIdentity;
  /** The leader's refusal in `memberId`'s assignment; asked after each join that gave this member no task. */
  refusal?: (memberId: string) => Promise<DuplicateRefusal | undefined>;
  /** Another live member keeps this member's instance id: the processor must stop. */
  onRefused?: (memberId: string, refusal: DuplicateRefusal) => void;
}

/**
 * The consumer loop: one group consumer over both inputs with the co-partitioned assigner.
 * Each generation's assignment goes to the task lifecycle; each fetched batch is folded by its
 * RUNNING task. Recovery: a consumer kafkajs gives up on, that hangs or that the group evicted is
 * replaced in this process (a ReplacingConsumer whose back-off grows until a consumer joins).
 */
export class GroupConsumer {
  private readonly replacing: ReplacingConsumer;
  private joinedGroup = false;
  private memberId?: string;
  /** Consecutive membership checks that found this member absent from a settled group. */
  private absences = 0;
  private membershipTimer?: NodeJS.Timeout;

  constructor(private readonly deps: GroupConsumerDeps) {
    const { inputTopics, logger, metrics } = deps;
    this.replacing = new ReplacingConsumer({
      what: 'group',
      stallMs: CONSUMER_STALL_MS,
      logger,
      backOff: 'until-joined',
      stopping: () => deps.stopping(),
      create: () => this.createConsumer(),
      connect: async (consumer) => {
        await consumer.connect();
        await consumer.subscribe({ topics: [...inputTopics], fromBeginning: true });
      },
      run: (consumer) => this.runConsumer(consumer),
      onReplacing: (reason) => {
        this.joinedGroup = false; // not ready until the replacement has joined
        metrics.consumerReplacements.inc({ reason });
      },
      log: ({ reason, attempt, err }) => logger.warn({ err, reason, attempt }, REPLACING[reason]),
    });
  }

  /** The consumer in use now (the lifecycle pauses, resumes and seeks through it). */
  get current(): Consumer {
    return this.replacing.current!;
  }

  /** The group has been joined, and the consumer has not been lost since. */
  get joined(): boolean {
    return this.joinedGroup;
  }

  /**
   * Creates, joins and runs the group consumer, watched: if kafkajs gives up on it or it hangs, it
   * is replaced in this process while the tasks keep their producers and stores (see DECISIONS.md,
   * 'The group consumer is replaced in-process'). Never gives up: exiting would only trade this
   * loop for the orchestrator's.
   */
  async run(): Promise<void> {
    this.watchMembership();
    await this.replacing.start();
  }

  private createConsumer(): Consumer {
    const { kafka, groupId, config, lifecycle, logger, identity } = this.deps;
    const assigner = coPartitionedAssigner({
      ...(identity && { identity }),
      holding: () => lifecycle.held(),
      onDuplicate: (excluded, { instanceId, holder }) =>
        logger.warn(
          { instanceId, excluded, keeper: holder },
          'two group members carry one INSTANCE_ID: the later-started one gets no tasks',
        ),
    });
    const consumer = kafka.consumer({
      groupId,
      partitionAssigners: [assigner],
      readUncommitted: false,
      sessionTimeout: config.sessionTimeoutMs,
      rebalanceTimeout: REBALANCE_TIMEOUT_MS,
      heartbeatInterval: Math.floor(config.sessionTimeoutMs / 10),
      maxWaitTimeInMs: 50,
      maxBytesPerPartition: config.fetchMaxBytesPerPartition,
      // A crash is final; the ReplacingConsumer replaces the consumer (see OWNER_REPLACES).
      retry: { retries: 10, ...OWNER_REPLACES },
    });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      if (this.replacing.current !== consumer) return;
      const owned = tasksOf(payload.memberAssignment);
      this.joinedGroup = true;
      this.memberId = payload.memberId;
      this.absences = 0;
      logger.info({ tasks: owned, memberId: payload.memberId }, 'joined the group');
      lifecycle.onAssignment(payload.memberId, owned, payload.generationId);
      if (owned.length === 0) this.checkRefused(consumer, payload.memberId);
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed');
    });
    return consumer;
  }

  /** No task: perhaps the leader refused this member as a duplicate of a live instance id (it says so in the assignment). */
  private checkRefused(consumer: Consumer, memberId: string): void {
    const { refusal, onRefused, logger } = this.deps;
    if (!refusal || !onRefused) return;
    void refusal(memberId)
      .then((refused) => {
        if (refused && this.replacing.current === consumer && this.memberId === memberId && !this.deps.stopping()) {
          onRefused(memberId, refused);
        }
      })
      .catch((err: unknown) => logger.debug({ err }, 'could not read this member’s assignment; asked again next join'));
  }

  private runConsumer(consumer: Consumer): Promise<void> {
    const { config, lifecycle, metrics } = this.deps;
    return consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: config.concurrency,
      eachBatch: async ({ batch, resolveOffset, isRunning, isStale }) => {
        // A batch fetched before a seek, or for a task that is not RUNNING in the current
        // assignment, is dropped unresolved: kafkajs fetches it again from where the task resumes.
        if (!isRunning() || isStale() || this.replacing.current !== consumer) return;
        const task = lifecycle.runningTask(batch.partition);
        if (!task) return;
        const input: InputBatch = {
          topic: batch.topic,
          partition: batch.partition,
          messages: batch.messages,
          lastOffset: batch.lastOffset(),
        };
        // The command share may stop a commands batch part-way: kafkajs fetches the rest again
        // from the offset after `taken` once the task resumes that partition.
        const taken = await task.foldBatch(input);
        if (taken === undefined) return;
        resolveOffset(taken);
        metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Number(batch.offsetLag()));
        const whole = taken === input.lastOffset;
        await this.deps.afterBatch?.(
          task,
          whole
            ? input
            : {
                ...input,
                messages: input.messages.filter((m) => BigInt(m.offset) <= BigInt(taken)),
                lastOffset: taken,
              },
        );
      },
    });
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
      const consumer = this.replacing.current;
      const memberId = this.memberId;
      if (checking || !consumer || !memberId || !this.joinedGroup || this.deps.stopping()) return;
      checking = true;
      void membership(memberId)
        .then((answer) => {
          if (this.replacing.current !== consumer || this.memberId !== memberId) return;
          this.absences = answer === 'absent' ? this.absences + 1 : answer === 'member' ? 0 : this.absences;
          if (this.absences >= 2) {
            this.absences = 0;
            this.replacing.replaceCurrent('evicted');
          }
        })
        .catch(() => undefined) // an unanswered check is no verdict
        .finally(() => (checking = false));
    }, every);
    this.membershipTimer.unref();
  }

  /** Graceful stop, step 1 (with deps.stopping() true): the watch ends; the consumer runs on until disconnect. */
  stopWatching(): void {
    this.replacing.stopWatching();
    clearInterval(this.membershipTimer);
    this.membershipTimer = undefined;
  }

  /** Graceful stop, step 2 (the tasks drained): leaves the group. */
  async disconnect(): Promise<void> {
    await this.replacing.current
      ?.disconnect()
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'consumer disconnect failed'));
  }
}
