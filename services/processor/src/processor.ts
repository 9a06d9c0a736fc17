import type { EntityDomain } from '@state-relay/domain';
import type { TaskStore } from '@state-relay/store';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  assertEosV2Support,
  duplicateRefusalFor,
  groupMembership,
  initTransactionalProducer,
  instanceTransactionalId,
  ReplaceableAdmin,
  supportsEosV2,
  type MemberIdentity,
} from '@state-relay/kafka-runtime';
import { checkKafkaConnection, createKafkaClient, type KafkaClientOptions } from '@state-relay/service-kit';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { ProcessorConfig } from './config';
import { InstanceIdInUseError } from './errors';
import type { ProcessingExtension } from './extension';
import { GroupConsumer } from './kafka/group-consumer';
import { assertInstanceIdFree, INSTANCE_ID_FILE, instanceIdFor } from './kafka/instance-id';
import { provisionTopics } from './kafka/topics';
import { InstanceCommitter } from './tasks/instance-commit';
import type { ProcessorMetrics } from './metrics';
import { instancePorts, kafkaPorts, legacyFence, settleOnBroker, stableEntryPorts } from './tasks/kafka-ports';
import { TaskLifecycle } from './tasks/lifecycle';
import { warmCommandPath } from './tasks/warm-up';
import { refreshStoreMetrics } from './tasks/store-metrics';
import { CommitLatencyWindow } from './status/commit-latency-window';
import { EventCommitLatency } from './status/event-commit-latency';
import { InputLagProbe } from './status/input-lag';
import { processorStatus } from './status/processor-status';
import { RestoreProgress } from './status/restore-progress';
import type { ProcessorStatus } from './status/schema';

export interface ProcessorDeps {
  config: ProcessorConfig;
  domain: EntityDomain;
  logger: Logger;
  metrics: ProcessorMetrics;
  /** Code run inside the loop (a punctuator, a commit listener); the service sets none. */
  extension?: ProcessingExtension;
  /** Tests inject a failing store here. */
  openStore?: (dir: string, task: number) => TaskStore;
  /**
   * The processor cannot go on (EXACTLY_ONCE=v2: another process took the instance's transactional
   * id) and has begun to stop; the service exits 1 (an orchestrator restarts it).
   */
  onFatal?: (err: unknown) => void;
}

/** What the HTTP surface and embedders see of the tasks. */
export type TaskView = Pick<TaskLifecycle, 'owned' | 'read' | 'stateOf'>;
const NO_TASKS: TaskView = { owned: [], read: () => undefined, stateOf: () => undefined };

/**
 * The owner of the state: provisions its topics (kafka/topics.ts), consumes the events and
 * commands topics as one consumer group with the co-partitioned assigner (kafka/group-consumer.ts);
 * the task lifecycle (tasks/) turns each assigned partition pair into a task that folds what is
 * fetched and commits once per interval.
 */
export class Processor {
  readonly kafka: Kafka;
  /** What `kafka` was made from: the start check makes its own client from them, without retries. */
  private readonly kafkaOptions: KafkaClientOptions;
  readonly groupId: string;
  private readonly inputTopics: readonly string[];
  private admin?: ReplaceableAdmin;
  private committer?: InstanceCommitter;
  private lifecycle?: TaskLifecycle;
  private group?: GroupConsumer;
  private stopping = false;
  private stopStoreMetrics?: () => void;
  /** What GET /status reports beyond the metrics: recent commit latencies, restores, input lag. */
  private readonly commitLatency = new CommitLatencyWindow();
  private readonly eventCommitLatency: EventCommitLatency;
  private readonly restores = new RestoreProgress();
  private inputLag?: InputLagProbe;
  private instanceId: string | null;

  constructor(private readonly deps: ProcessorDeps) {
    const { config, logger } = deps;
    this.groupId = config.appId;
    this.inputTopics = [config.eventsTopic, config.commandsTopic];
    this.instanceId = config.instanceId ?? null;
    this.eventCommitLatency = new EventCommitLatency(config.eventsTopic);
    this.kafkaOptions = {
      clientId: `${config.appId}-processor`,
      brokers: config.brokers,
      connection: config.kafkaConnection,
      logger,
    };
    this.kafka = createKafkaClient(this.kafkaOptions);
  }

  /** Ready when the group has been joined and every assigned task is RUNNING. */
  get isReady(): boolean {
    return (this.group?.joined ?? false) && !this.stopping && (this.lifecycle?.allRunning ?? false);
  }

  /** The tasks of the current assignment (none before start). */
  get tasks(): TaskView {
    return this.lifecycle ?? NO_TASKS;
  }

  /** What the scanner's status page shows of this instance (GET /status). */
  status(): Promise<ProcessorStatus> {
    return processorStatus({
      instanceId: this.instanceId,
      ready: this.isReady,
      tasks: this.tasks,
      restores: this.restores,
      commitLatency: this.commitLatency,
      eventCommitLatency: this.eventCommitLatency,
      metrics: this.deps.metrics,
      inputLag: async () => (this.inputLag ? this.inputLag.read() : null),
    });
  }

  /** Creates missing topics, refuses non-co-partitioned inputs, joins the group. */
  async start(): Promise<void> {
    const { config, logger, metrics, extension } = this.deps;
    const startedAt = Date.now();
    await checkKafkaConnection(this.kafkaOptions); // refused credentials or certificate: stop now
    const provisioning = this.kafka.admin();
    await provisioning.connect();
    const { deleteRetentionMs } = await provisionTopics(provisioning, config, logger).finally(() =>
      provisioning.disconnect().catch(() => undefined),
    );
    const v2 = config.exactlyOnce === 'v2';
    if (v2) await assertEosV2Support(this.kafka, this.groupId, 'EXACTLY_ONCE=v2');
    const requireStableOffsets = v2 || (await supportsEosV2(this.kafka, this.groupId));
    if (!requireStableOffsets) {
      logger.warn(
        'the broker predates Kafka 2.5 (no OffsetFetch v7): committed offsets are read without require_stable',
      );
    }
    // The lifecycle's reads (ownership, offsets, changelog ends) for the life of the process: a
    // client replaced after any failed call, so a black-holed connection never outlives one call.
    const admin = new ReplaceableAdmin(this.kafka, {
      onReplaced: (call, err) => {
        metrics.adminReplacements.inc();
        logger.warn(
          { call, err },
          'admin call failed; the admin client is replaced, the next call opens new connections',
        );
      },
    });
    this.admin = admin;
    const inputLag = new InputLagProbe({ admin, groupId: this.groupId, topics: this.inputTopics });
    this.inputLag = inputLag;

    const inputTopics = this.inputTopics;
    const topics = {
      events: config.eventsTopic,
      commands: config.commandsTopic,
      results: config.resultsTopic,
      deadLetter: config.deadLetterTopic,
      changelog: config.changelogTopic,
    };
    // In the producers' metadata from the start: the first results send does not wait on a Metadata request.
    const outputTopics = [config.resultsTopic, config.deadLetterTopic, config.changelogTopic];
    let committer: InstanceCommitter | undefined;
    let identity: MemberIdentity | undefined;
    const keptIn = config.instanceId ? undefined : join(config.stateDir, INSTANCE_ID_FILE);
    if (v2) {
      const instanceId = instanceIdFor(config.stateDir, config.instanceId);
      this.instanceId = instanceId;
      // Before the producer's first InitProducerId: it would fence a live process with this id.
      await assertInstanceIdFree({ admin, groupId: this.groupId, instanceId, logger, ...(keptIn && { keptIn }) });
      identity = { instanceId, startedAt, host: hostname(), sessionTimeoutMs: config.sessionTimeoutMs };
      const transactionalId = instanceTransactionalId(config.appId, this.instanceId);
      logger.info(
        { transactionalId, legacyFence: config.exactlyOnceLegacyFence === 'true' },
        'exactly-once v2: one transaction per commit interval for every task of this instance',
      );
      committer = new InstanceCommitter({
        createProducer: () =>
          initTransactionalProducer({
            kafka: this.kafka,
            transactionalId,
            transactionTimeoutMs: config.transactionTimeoutMs,
            targetTopics: outputTopics,
          }),
        groupId: this.groupId,
        topics,
        intervalMs: config.commitIntervalMs,
        transactionTimeoutMs: config.transactionTimeoutMs,
        logger,
        metrics,
        onFenced: (err) => {
          void this.stop();
          this.deps.onFatal?.(err);
        },
      });
      this.committer = committer;
    }
    const ports = kafkaPorts({
      kafka: this.kafka,
      admin,
      consumer: () => this.group!.current,
      appId: config.appId,
      groupId: this.groupId,
      stateDir: config.stateDir,
      changelogTopic: config.changelogTopic,
      inputTopics,
      transactionTimeoutMs: config.transactionTimeoutMs,
      outputTopics,
      requireStableOffsets,
      ...(this.deps.openStore ? { openStore: this.deps.openStore } : {}),
    });
    const settle = settleOnBroker({
      kafka: this.kafka,
      changelogTopic: config.changelogTopic,
      transactionTimeoutMs: config.transactionTimeoutMs,
    });
    // A group may mix v1 and v2 instances while it rolls from one to the other: v2 fences each
    // task's v1 id, v1 (on a broker that has KIP-447) waits out a v2 owner's transaction.
    const fenceLegacy =
      config.exactlyOnceLegacyFence === 'true'
        ? legacyFence({ kafka: this.kafka, appId: config.appId, transactionTimeoutMs: config.transactionTimeoutMs })
        : undefined;
    const lifecycle = new TaskLifecycle({
      ports: committer
        ? instancePorts(ports, committer, settle, fenceLegacy)
        : requireStableOffsets
          ? stableEntryPorts(ports, settle)
          : ports,
      deleteRetentionMs,
      stateCleanupDelayMs: config.stateCleanupDelayMs,
      inputTopics,
      restores: this.restores,
      task: {
        commitLatency: this.commitLatency,
        domain: this.deps.domain,
        topics,
        groupId: this.groupId,
        logger,
        metrics,
        commitIntervalMs: config.commitIntervalMs,
        commitMaxRecords: config.commitMaxRecords,
        maxUncommittedRecords: config.maxUncommittedRecords,
        commandShare: config.commandShare,
        foldSliceMs: config.foldSliceMs,
        entityMaxBytes: config.entityMaxBytes,
        poisonMaxAttempts: config.poisonMaxAttempts,
        onCommit: (report) => {
          this.eventCommitLatency.observe(report);
          extension?.onCommit?.(report);
        },
        ...(committer && { commits: committer }),
      },
    });
    this.lifecycle = lifecycle;
    const warm = warmCommandPath(this.deps.domain, config.commandsTopic);
    logger.info(warm, 'command path warmed up (synthetic commands through the fold, nothing stored or sent)');
    metrics.readCommittedLagFrom({ read: () => inputLag.read(), owned: () => lifecycle.owned });
    await committer?.start(lifecycle);
    this.group = new GroupConsumer({
      kafka: this.kafka,
      groupId: this.groupId,
      inputTopics,
      config,
      lifecycle,
      logger,
      metrics,
      stopping: () => this.stopping,
      membership: (memberId) => groupMembership(admin, this.groupId, memberId).catch(() => 'unknown' as const),
      ...(identity && {
        identity,
        refusal: (memberId: string) => duplicateRefusalFor(admin, this.groupId, memberId),
        onRefused: (_memberId: string, { instanceId, holder }) => {
          const err = new InstanceIdInUseError(instanceId, holder, keptIn);
          logger.error(
            { err },
            'the group leader gave this member no tasks: another live process keeps its INSTANCE_ID',
          );
          void this.stop();
          this.deps.onFatal?.(err);
        },
      }),
      ...(extension?.afterBatch ? { afterBatch: (task, batch) => extension.afterBatch!(task, batch) } : {}),
    });
    await this.group.run();
    this.stopStoreMetrics = refreshStoreMetrics(lifecycle);
  }

  /** Commits what every task holds, leaves the group, closes every task (state files kept). */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.deps.metrics.readCommittedLagFrom(undefined);
    this.stopStoreMetrics?.();
    this.group?.stopWatching();
    await this.lifecycle?.drain();
    await this.group?.disconnect();
    await this.lifecycle?.closeAll();
    await this.committer?.stop();
    await this.admin?.disconnect().catch(() => undefined);
  }
}
