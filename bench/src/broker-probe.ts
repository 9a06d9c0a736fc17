import {
  createTopics,
  initTaskProducer,
  LatencyHistogram,
  type Admin,
  type Kafka,
  type LatencySummary,
  type Producer,
} from './lib';

export interface BrokerProbe {
  /** One small produce request (acks=all), non-transactional. */
  produceMs: LatencySummary;
  /** Back-to-back transactions (one record, consumed offsets, commit) with the processor's own task producer (retry from 20 ms). */
  transactionMs: LatencySummary;
  /** The same with kafkajs's default retry, from 100 ms (the task producer's setting before issue 11). */
  transactionSlowRetryMs: LatencySummary;
  /** initTaskProducer for an id whose previous producer is still connected: connect + InitProducerId (the fence). */
  fenceMs: LatencySummary;
}

const ROUNDS = 40;
const BLOCK = 10;
const FENCES = 10;

/**
 * What one transaction costs on this broker, outside the processor. Right after a commit the
 * broker answers the next transaction's first request with CONCURRENT_TRANSACTIONS until the
 * commit markers are written; kafkajs then waits its retry backoff (20 ms and up in the task
 * producer, 100 ms by default), so a task's back-to-back transactions are paced by that backoff.
 * And what the fence at each task start (initTaskProducer) costs.
 */
export async function probeBroker(kafka: Kafka, admin: Admin): Promise<BrokerProbe> {
  const topic = `bench-probe-${Date.now().toString(36)}`;
  await createTopics(admin, [{ topic, partitions: 2 }]);
  const plain = kafka.producer({ allowAutoTopicCreation: false });
  await plain.connect();
  const produce = new LatencyHistogram();
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await plain.send({ topic, messages: [{ key: 'k', value: 'v'.repeat(200) }] });
    produce.record(performance.now() - started);
  }
  await plain.disconnect();

  const task = await initTaskProducer({ kafka, appId: `${topic}-task`, task: 0 });
  const slow = kafka.producer({
    transactionalId: `${topic}-slow-0`,
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 5_000 },
  });
  await slow.connect();
  // In alternating blocks, so drift of the shared machine does not favour one of the two.
  const fastTimes = new LatencyHistogram();
  const slowTimes = new LatencyHistogram();
  await warmUp(task, topic);
  await warmUp(slow, topic);
  for (let block = 0; block < ROUNDS / BLOCK; block++) {
    await transactions(task, topic, block * BLOCK, fastTimes);
    await transactions(slow, topic, block * BLOCK, slowTimes);
  }
  // Each new producer of the id fences the one before it (still connected, as a zombie would be).
  const fences = new LatencyHistogram();
  let previous = task;
  for (let i = 0; i < FENCES; i++) {
    const started = performance.now();
    const next = await initTaskProducer({ kafka, appId: `${topic}-task`, task: 0 });
    fences.record(performance.now() - started);
    await previous.disconnect().catch(() => undefined);
    previous = next;
  }
  const result = {
    produceMs: produce.summary(),
    transactionMs: fastTimes.summary(),
    transactionSlowRetryMs: slowTimes.summary(),
    fenceMs: fences.summary(),
  };
  await Promise.all([previous.disconnect(), slow.disconnect()]);
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  return result;
}

function transactionOnce(producer: Producer, topic: string): (i: number) => Promise<void> {
  return async (i: number) => {
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
}

/** On a fresh broker the group coordinator may still be loading: retry the first transaction. */
async function warmUp(producer: Producer, topic: string): Promise<void> {
  const once = transactionOnce(producer, topic);
  for (let attempt = 1; ; attempt++) {
    try {
      await once(0);
      return;
    } catch (err) {
      if (attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** BLOCK back-to-back transactions, each begun right after the previous one committed, timed into `times`. */
async function transactions(producer: Producer, topic: string, offset: number, times: LatencyHistogram): Promise<void> {
  const once = transactionOnce(producer, topic);
  for (let i = 1; i <= BLOCK; i++) {
    const started = performance.now();
    await once(offset + i);
    times.record(performance.now() - started);
  }
}
