import { Kafka, Producer } from 'kafkajs';
import { withCoordinatorCache } from './coordinator-cache';

export interface TaskProducerOptions {
  kafka: Kafka;
  appId: string;
  task: number;
  /** Broker aborts a transaction left open longer than this (a crashed or frozen owner). */
  transactionTimeoutMs?: number;
}

/** How long a task producer trusts a coordinator it looked up. */
const COORDINATOR_TTL_MS = 10_000;

/** `<app>-<task>`: one transactional id per task, as Kafka Streams did before EOS v2. */
export function transactionalIdFor(appId: string, task: number): string {
  return `${appId}-${task}`;
}

/**
 * The transactional producer of one task, initialised: when this resolves the broker has
 * answered InitProducerId for `<app>-<task>`, so every earlier producer with that id (a
 * previous owner, or this instance's own previous incarnation of the task) is fenced and its
 * pending transaction is completed — committed if its EndTxn was already accepted, aborted
 * otherwise. Only then may the caller read the changelog end and the committed offsets.
 *
 * kafkajs's `connect()` does not send InitProducerId; its first `transaction()` does. So this
 * begins and aborts an empty transaction (no partition added: kafkajs sends no EndTxn for it).
 * kafkajs retries CONCURRENT_TRANSACTIONS while the broker completes the old transaction;
 * 20 ms is the Java client's retry back-off (kafkajs's default of 100 ms is paid per retry).
 * Coordinators are remembered (see withCoordinatorCache): a transaction is then AddPartitionsToTxn,
 * Produce, AddOffsetsToTxn, TxnOffsetCommit and EndTxn, without a FindCoordinator before each.
 */
export async function initTaskProducer(opts: TaskProducerOptions): Promise<Producer> {
  const producer = withCoordinatorCache(opts.kafka, COORDINATOR_TTL_MS, () =>
    opts.kafka.producer({
      transactionalId: transactionalIdFor(opts.appId, opts.task),
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: opts.transactionTimeoutMs ?? 60_000,
      allowAutoTopicCreation: false,
      retry: { retries: 12, initialRetryTime: 20, maxRetryTime: 2_000 },
    }),
  );
  await producer.connect();
  try {
    const fence = await producer.transaction();
    await fence.abort();
  } catch (err) {
    await producer.disconnect().catch(() => undefined);
    throw err;
  }
  return producer;
}
