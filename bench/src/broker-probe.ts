import { connectTaskProducer, type Admin, type Kafka, type Producer } from './lib';
import { summarize, type LatencySummary } from './stats';
import { createTopicsRetrying } from './deployment';

export interface BrokerProbe {
  /** One small produce request (acks=all), non-transactional. */
  produceMs: LatencySummary;
  /** Back-to-back transactions (one record, consumed offsets, commit) with the processor's own task producer. */
  transactionMs: LatencySummary;
  /** The same with kafkajs's retry starting at 20 ms instead of 100 ms (what the Java client does for this case). */
  transactionFastRetryMs: LatencySummary;
}

const ROUNDS = 40;

/**
 * What one transaction costs on this broker, outside the processor. Right after a commit the
 * broker answers the next transaction's first request with CONCURRENT_TRANSACTIONS until the
 * commit markers are written; kafkajs then waits its normal retry backoff (100 ms and up in
 * the task producer), so a task's back-to-back transactions are paced by that backoff.
 */
export async function probeBroker(kafka: Kafka, admin: Admin): Promise<BrokerProbe> {
  const topic = `bench-probe-${Date.now().toString(36)}`;
  await createTopicsRetrying(admin, [{ topic, partitions: 2 }]);
  const plain = kafka.producer({ allowAutoTopicCreation: false });
  await plain.connect();
  const produce: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await plain.send({ topic, messages: [{ key: 'k', value: 'v'.repeat(200) }] });
    produce.push(performance.now() - started);
  }
  await plain.disconnect();

  const task = await connectTaskProducer({ kafka, appId: `${topic}-task`, task: 0 });
  const fast = kafka.producer({
    transactionalId: `${topic}-fast-0`,
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    retry: { retries: 10, initialRetryTime: 20, maxRetryTime: 5_000 },
  });
  await fast.connect();
  const result = {
    produceMs: summarize(produce),
    transactionMs: summarize(await transactions(task, topic)),
    transactionFastRetryMs: summarize(await transactions(fast, topic)),
  };
  await Promise.all([task.disconnect(), fast.disconnect()]);
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  return result;
}

async function transactions(producer: Producer, topic: string): Promise<number[]> {
  const once = async (i: number) => {
    const tx = await producer.transaction();
    try {
      await tx.send({ topic, messages: [{ key: 'k', value: 'v'.repeat(200), partition: 0 }] });
      await tx.sendOffsets({
        consumerGroupId: `${topic}-group`,
        topics: [{ topic, partitions: [{ partition: 1, offset: String(i + 1) }] }],
      });
      await tx.commit();
    } catch (err) {
      await tx.abort().catch(() => undefined);
      throw err;
    }
  };
  // Warm up: on a fresh broker the group coordinator may still be loading.
  for (let attempt = 1; ; attempt++) {
    try {
      await once(0);
      break;
    } catch (err) {
      if (attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const times: number[] = [];
  for (let i = 1; i <= ROUNDS; i++) {
    const started = performance.now();
    await once(i);
    times.push(performance.now() - started);
  }
  return times;
}
