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
 * answered InitProducerId for `<app>-<task>`, so every earlier producer with that id is fenced
 * and its pending transaction completed. Only then may the caller read the changelog end and
 * the committed offsets. kafkajs sends InitProducerId at the first `transaction()`, not at
 * `connect()`: hence the empty transaction (see DECISIONS.md, 'Fencing by an empty transaction').
 */
export async function initTaskProducer(opts: TaskProducerOptions): Promise<Producer> {
  return initTransactionalProducer({
    kafka: opts.kafka,
    transactionalId: transactionalIdFor(opts.appId, opts.task),
    ...(opts.transactionTimeoutMs !== undefined && { transactionTimeoutMs: opts.transactionTimeoutMs }),
  });
}

/** `<app>-instance-<id>`: exactly-once v2, one transactional id per processor instance, stable across its restarts. */
export function instanceTransactionalId(appId: string, instanceId: string): string {
  return `${appId}-instance-${instanceId}`;
}

/**
 * A transactional producer with `transactionalId`, initialised (InitProducerId answered: every
 * earlier producer with the id is fenced and its pending transaction completed), as initTaskProducer.
 */
export async function initTransactionalProducer(opts: {
  kafka: Kafka;
  transactionalId: string;
  transactionTimeoutMs?: number;
}): Promise<Producer> {
  const producer = withCoordinatorCache(opts.kafka, COORDINATOR_TTL_MS, () =>
    opts.kafka.producer({
      transactionalId: opts.transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: opts.transactionTimeoutMs ?? 60_000,
      allowAutoTopicCreation: false,
      // 20 ms: the Java client's back-off; kafkajs retries CONCURRENT_TRANSACTIONS while the old transaction completes.
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
