import { runChild, type ChildMessage } from '../ipc';
import { kafkajs, LatencyHistogram } from '../lib';

export interface RawChildConfig {
  brokers: string[];
  groupId: string;
  inputTopic: string;
  outputTopic: string;
  /** Records to copy before reporting `done`. */
  expect: number;
}

/**
 * The raw ceiling of this broker and client: a kafkajs consume -> produce pipeline with the
 * processor's consumer settings, but no state, no decoding and no transactions (offsets are
 * auto-committed; acks=all like the processor's producer).
 */
runChild<RawChildConfig>(async (cfg, send) => {
  const kafka = new kafkajs.Kafka({ clientId: 'bench-raw', brokers: cfg.brokers, logLevel: kafkajs.logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  const consumer = kafka.consumer({
    groupId: cfg.groupId,
    maxWaitTimeInMs: 100,
    maxBytesPerPartition: 2 * 1024 * 1024,
  });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topic: cfg.inputTopic, fromBeginning: true });
  let joinedAt = 0;
  consumer.on(consumer.events.GROUP_JOIN, () => (joinedAt ||= Date.now()));

  let copied = 0;
  let firstAt: number | undefined;
  let firstRecords = 0;
  let lastAt = 0;
  const batchMs = new LatencyHistogram();
  let reported = false;
  await consumer.run({
    partitionsConsumedConcurrently: 4,
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      if (batch.messages.length === 0) return;
      const started = Date.now();
      // In requests of at most 512 KiB, as the processor sends (kafkajs does not split a
      // request to fit the broker's max.message.bytes).
      let slice: Array<{ key: Buffer | null; value: Buffer | null }> = [];
      let bytes = 0;
      for (const m of batch.messages) {
        const size = (m.key?.length ?? 0) + (m.value?.length ?? 0) + 64;
        if (bytes + size > 512 * 1024 && slice.length > 0) {
          await producer.send({ topic: cfg.outputTopic, messages: slice });
          slice = [];
          bytes = 0;
        }
        slice.push({ key: m.key, value: m.value });
        bytes += size;
      }
      if (slice.length > 0) await producer.send({ topic: cfg.outputTopic, messages: slice });
      resolveOffset(batch.lastOffset());
      await heartbeat();
      const now = Date.now();
      batchMs.record(now - started);
      if (firstAt === undefined) {
        firstAt = now;
        firstRecords = batch.messages.length;
      }
      lastAt = now;
      copied += batch.messages.length;
      if (copied >= cfg.expect && !reported) {
        reported = true;
        send({
          type: 'done',
          joinedAt,
          firstAt,
          firstRecords,
          lastAt,
          copied,
          batches: batchMs.count,
          batchMs: batchMs.summary(),
        });
      }
    },
  });

  process.on('message', (m: ChildMessage) => {
    if (m.type !== 'stop') return;
    void Promise.all([consumer.disconnect(), producer.disconnect()]).then(() => {
      send({ type: 'stopped' });
      setTimeout(() => process.exit(0), 50);
    });
  });
});
