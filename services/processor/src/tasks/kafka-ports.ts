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
      initTaskProducer({ kafka: o.kafka, appId: o.appId, task, transactionTimeoutMs: o.transactionTimeoutMs }),
    openStore: (task) => (o.openStore ? o.openStore(o.stateDir, task) : TaskStore.open({ dir: o.stateDir, task })),
    removeStore: (task) => TaskStore.remove({ dir: o.stateDir, task }),
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
    seek: (topic, task, offset) => whileRunning(() => o.consumer().seek({ topic, partition: task, offset })),
  };
}

/**
 * Exactly-once v2's ports: no per-task fence. Entering a task waits for the instance producer,
 * then for a require_stable read of the task's own offsets (no transaction of an earlier owner
 * can still change them), then reads the changelog end only once every transaction that had
 * written to the task's partition has ended: EndTxn is answered before the markers are written,
 * and the offsets' marker can land before the changelog's, so an end read in between would miss
 * records whose offsets are committed (the restored store would lack them; a fault campaign run
 * lost one event on each of 27 keys that way).
 */
export function instancePorts(
  ports: LifecyclePorts,
  committer: { ready(): Promise<void> },
  /** The entering tasks' ends once settled (the service: settledEnds on the changelog). */
  settle: (tasks: readonly number[], ends: ReadonlyMap<number, bigint>) => Promise<Map<number, bigint>>,
): LifecyclePorts {
  return {
    ...ports,
    initProducer: async (task) => {
      await committer.ready();
      await ports.committedOffsets([task]);
      return undefined;
    },
    changelogEnds: async (tasks) => {
      const ends = await ports.changelogEnds();
      if (!tasks || tasks.length === 0) return ends;
      return new Map([...ends, ...(await settle(tasks, ends))]);
    },
  };
}

/** instancePorts' `settle` on a real broker: settledEnds on the changelog, within the transaction timeout and 30 s. */
export function settleOnBroker(o: Pick<KafkaPortsOptions, 'kafka' | 'changelogTopic' | 'transactionTimeoutMs'>) {
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
