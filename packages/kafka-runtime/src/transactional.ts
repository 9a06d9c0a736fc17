import { Kafka, Producer } from 'kafkajs';
import { withCoordinatorCache } from './coordinator-cache';
import { KafkajsShapeError } from './errors';
import { withTargetTopics, type AddTargetTopics } from './kafkajs';

export interface TaskProducerOptions {
  kafka: Kafka;
  appId: string;
  task: number;
  /** Broker aborts a transaction left open longer than this (a crashed or frozen owner). */
  transactionTimeoutMs?: number;
  /** See initTransactionalProducer. */
  targetTopics?: readonly string[];
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
    ...(opts.targetTopics && { targetTopics: opts.targetTopics }),
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
  /**
   * Topics the producer will send to: their metadata is fetched once it is initialised, not by
   * the first transaction that sends there (81-223 ms of the first results send in issue 32's
   * profile). Best effort: a failure leaves it to that first send.
   */
  targetTopics?: readonly string[];
}): Promise<Producer> {
  const { producer, addTargetTopics } = createWithTargetTopics(opts.kafka, () =>
    withCoordinatorCache(opts.kafka, COORDINATOR_TTL_MS, () =>
      opts.kafka.producer({
        transactionalId: opts.transactionalId,
        idempotent: true,
        maxInFlightRequests: 1,
        transactionTimeout: opts.transactionTimeoutMs ?? 60_000,
        allowAutoTopicCreation: false,
        // 20 ms: the Java client's back-off; kafkajs retries CONCURRENT_TRANSACTIONS while the old transaction completes.
        retry: { retries: 12, initialRetryTime: 20, maxRetryTime: 2_000 },
      }),
    ),
  );
  await producer.connect();
  try {
    const fence = await producer.transaction();
    await fence.abort();
  } catch (err) {
    await producer.disconnect().catch(() => undefined);
    throw err;
  }
  if (opts.targetTopics?.length && addTargetTopics) {
    await addTargetTopics([...opts.targetTopics]).catch(() => undefined);
  }
  return producer;
}

/** The producer and, where kafkajs's internals are as expected, its cluster's addMultipleTargetTopics. */
function createWithTargetTopics(
  kafka: Kafka,
  create: () => Producer,
): { producer: Producer; addTargetTopics?: AddTargetTopics } {
  try {
    const { client, addTargetTopics } = withTargetTopics(kafka, create);
    return { producer: client, addTargetTopics };
  } catch (err) {
    if (err instanceof KafkajsShapeError) return { producer: create() };
    throw err;
  }
}
