import { Kafka, Producer } from 'kafkajs';

export interface TaskProducerOptions {
  kafka: Kafka;
  appId: string;
  task: number;
  /** Broker aborts a transaction left open longer than this (a crashed owner). */
  transactionTimeoutMs?: number;
}

/** `<app>-<task>`: one transactional id per task, as Kafka Streams did before EOS v2. */
export function transactionalIdFor(appId: string, task: number): string {
  return `${appId}-${task}`;
}

/**
 * The transactional producer of one task. Connecting it fences any earlier producer with the
 * same id (a previous owner of the task) and aborts that owner's open transaction; kafkajs
 * retries CONCURRENT_TRANSACTIONS while the broker completes that abort.
 */
export async function connectTaskProducer(opts: TaskProducerOptions): Promise<Producer> {
  const producer = opts.kafka.producer({
    transactionalId: transactionalIdFor(opts.appId, opts.task),
    idempotent: true,
    maxInFlightRequests: 1,
    transactionTimeout: opts.transactionTimeoutMs ?? 60_000,
    allowAutoTopicCreation: false,
    retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 5_000 },
  });
  await producer.connect();
  return producer;
}
