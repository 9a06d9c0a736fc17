import {
  committedOffsets,
  endOffsets,
  initTaskProducer,
  isConsumerNotRunningError,
  restoreChangelog,
  settledEnds,
  taskOwnership,
  type AdminCalls,
} from '@state-relay/kafka-runtime';
import { TaskStore } from '@state-relay/store';
import type { Consumer, Kafka } from 'kafkajs';
import type { LifecyclePorts } from './lifecycle';

export interface KafkaPortsOptions {
  kafka: Kafka;
  /** The admin client of the lifecycle's reads (a ReplaceableAdmin in the service). */
  admin: Pick<AdminCalls, 'fetchTopicOffsets' | 'fetchOffsets' | 'describeGroups'>;
  consumer: () => Consumer;
  appId: string;
  groupId: string;
  stateDir: string;
  changelogTopic: string;
  inputTopics: readonly string[];
  transactionTimeoutMs: number;
  /** What the task producers send to (v1): their metadata is fetched when each is initialised. */
  outputTopics?: readonly string[];
  /**
   * Committed offsets are read with require_stable (the broker has KIP-447): a restore never
   * starts from offsets an earlier owner's transaction may still change.
   */
  requireStableOffsets: boolean;
  /** Tests inject store failures here; the service opens TaskStore files. */
  openStore?: (dir: string, task: number) => TaskStore;
}

/** The lifecycle's ports on a real broker, a kafkajs consumer and SQLite files. */
export function kafkaPorts(o: KafkaPortsOptions): LifecyclePorts {
  const both = (task: number) => o.inputTopics.map((topic) => ({ topic, partitions: [task] }));
  return {
    initProducer: (task) =>
      initTaskProducer({
        kafka: o.kafka,
        appId: o.appId,
        task,
        transactionTimeoutMs: o.transactionTimeoutMs,
        ...(o.outputTopics && { targetTopics: o.outputTopics }),
      }),
    openStore: (task) => (o.openStore ? o.openStore(o.stateDir, task) : TaskStore.open({ dir: o.stateDir, task })),
    removeStore: (task) => TaskStore.remove({ dir: o.stateDir, task }),
    storesOnDisk: () => TaskStore.tasksIn(o.stateDir),
    peekCheckpoint: (task) => TaskStore.peekCheckpoint({ dir: o.stateDir, task }),
    changelogEnds: () => endOffsets(o.admin, o.changelogTopic),
    restore: ({ from, ends, apply, wanted, onOffsetOutOfRange }) =>
      restoreChangelog({
        kafka: o.kafka,
        topic: o.changelogTopic,
        from,
        ends,
        apply,
        wanted,
        onOffsetOutOfRange,
        groupPrefix: `${o.appId}-restore`,
      }),
    committedOffsets: (tasks) =>
      committedOffsets(o.admin, o.groupId, [...o.inputTopics], {
        requireStable: o.requireStableOffsets,
        ...(tasks && { partitions: tasks }),
        // An open transaction ends within its timeout (the broker aborts it); then its markers.
        unstableWithinMs: o.transactionTimeoutMs + 30_000,
      }),
    ownership: (memberId, task) => taskOwnership(o.admin, o.groupId, memberId, task),
    pause: (task) => whileRunning(() => o.consumer().pause(both(task))),
    resume: (task) => whileRunning(() => o.consumer().resume(both(task))),
    pauseTopic: (topic, task) => whileRunning(() => o.consumer().pause([{ topic, partitions: [task] }])),
    resumeTopic: (topic, task) => whileRunning(() => o.consumer().resume([{ topic, partitions: [task] }])),
    seek: (topic, task, offset) => whileRunning(() => o.consumer().seek({ topic, partition: task, offset })),
  };
}

/** The entering tasks' changelog ends once settled (the service: settledEnds on the changelog). */
export type SettleEnds = (tasks: readonly number[], ends: ReadonlyMap<number, bigint>) => Promise<Map<number, bigint>>;

/**
 * Exactly-once v2's ports: no per-task producer. Entering a task waits for the instance producer,
 * fences the task's legacy v1 transactional id (`fenceLegacy`, see legacyFence), then does a
 * require_stable read of the task's own offsets (no transaction of an earlier owner can still
 * change them), then reads the changelog end only once every transaction that had written to the
 * task's partition has ended: EndTxn is answered before the markers are written, and the offsets'
 * marker can land before the changelog's, so an end read in between would miss records whose
 * offsets are committed (the restored store would lack them; a fault campaign run lost one event
 * on each of 27 keys that way).
 */
export function instancePorts(
  ports: LifecyclePorts,
  committer: { ready(): Promise<void> },
  settle: SettleEnds,
  /** Fences `<APP_ID>-<task>` (EXACTLY_ONCE_LEGACY_FENCE); absent: skipped. */
  fenceLegacy?: (task: number) => Promise<void>,
): LifecyclePorts {
  return {
    ...ports,
    initProducer: async (task) => {
      await committer.ready();
      await fenceLegacy?.(task);
      await ports.committedOffsets([task]);
      return undefined;
    },
    changelogEnds: settledChangelogEnds(ports, settle),
  };
}

/**
 * Exactly-once v1's ports on a broker with KIP-447 (2.5+): after the task's own fence, the same
 * require_stable read and settled end as v2. Its own fence completes every transaction of
 * `<APP_ID>-<task>`, but not one of a v2 instance that owned the task before (a group mixing v1
 * and v2 instances, during a roll between them): without these a v1 task restored to an end that
 * a v2 zombie's transaction, committed later, moves past.
 */
export function stableEntryPorts(ports: LifecyclePorts, settle: SettleEnds): LifecyclePorts {
  return {
    ...ports,
    initProducer: async (task) => {
      const producer = await ports.initProducer(task);
      try {
        await ports.committedOffsets([task]);
      } catch (err) {
        await producer?.disconnect().catch(() => undefined);
        throw err;
      }
      return producer;
    },
    changelogEnds: settledChangelogEnds(ports, settle),
  };
}

function settledChangelogEnds(ports: LifecyclePorts, settle: SettleEnds): LifecyclePorts['changelogEnds'] {
  return async (tasks) => {
    const ends = await ports.changelogEnds();
    if (!tasks || tasks.length === 0) return ends;
    return new Map([...ends, ...(await settle(tasks, ends))]);
  };
}

/**
 * Exactly-once v2's fence of a task's legacy v1 transactional id `<APP_ID>-<task>`: InitProducerId
 * for it (the epoch is bumped, a v1 zombie's open transaction is aborted, its later commit fails
 * as fenced), then the producer is let go: nothing is sent with it. A v2 instance never otherwise
 * uses that id, so without this a frozen v1 instance of a group rolling from v1 to v2 could thaw
 * and commit its transaction for a task a v2 instance had restored meanwhile.
 */
export function legacyFence(o: Pick<KafkaPortsOptions, 'kafka' | 'appId' | 'transactionTimeoutMs'>) {
  return async (task: number): Promise<void> => {
    const producer = await initTaskProducer({
      kafka: o.kafka,
      appId: o.appId,
      task,
      transactionTimeoutMs: o.transactionTimeoutMs,
    });
    await producer.disconnect().catch(() => undefined);
  };
}

/** instancePorts' `settle` on a real broker: settledEnds on the changelog, within the transaction timeout and 30 s. */
export function settleOnBroker(
  o: Pick<KafkaPortsOptions, 'kafka' | 'changelogTopic' | 'transactionTimeoutMs'>,
): SettleEnds {
  return (tasks: readonly number[], ends: ReadonlyMap<number, bigint>) =>
    settledEnds(o.kafka, o.changelogTopic, tasks, { ends, withinMs: o.transactionTimeoutMs + 30_000 });
}

/**
 * Runs a pause, resume or seek unless the consumer is between runs, where kafkajs throws. Skipping
 * is safe: the next GROUP_JOIN re-seeks and re-pauses every task (TaskLifecycle.onAssignment; see
 * DECISIONS.md, 'Consumer calls between runs are skipped').
 */
function whileRunning(call: () => void): void {
  try {
    call();
  } catch (err) {
    if (!isConsumerNotRunningError(err)) throw err;
  }
}
