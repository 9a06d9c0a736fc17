import { runChild, type ChildMessage } from '../ipc';
import { kafkajs } from '../lib';

export interface ChangelogReaderConfig {
  brokers: string[];
  topic: string;
  groupId: string;
  maxBytesPerPartition: number;
  maxBytes: number;
  maxWaitTimeInMs: number;
}

/** What the reader reports once it has reached the end of every partition (epoch ms). */
export interface ChangelogReaderDone extends ChildMessage {
  type: 'done';
  records: number;
  /** Before connect(); the group joined; the first batch handed over; every partition at its end. */
  connectAt: number;
  joinedAt: number;
  firstAt: number;
  doneAt: number;
}

/**
 * The ceiling restore is compared with: a bare kafkajs consumer (read_committed, its own
 * throw-away group, as the processor's restore and the scanner's replica must use: kafkajs has
 * no manual assignment) reading the changelog from the beginning to the end offsets it read at
 * its start, counting records and touching nothing else.
 */
runChild<ChangelogReaderConfig>(async (cfg, send) => {
  const kafka = new kafkajs.Kafka({
    clientId: 'bench-reader',
    brokers: cfg.brokers,
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map((await admin.fetchTopicOffsets(cfg.topic)).map((o) => [o.partition, BigInt(o.high)]));
  const position = new Map([...ends.keys()].map((p) => [p, 0n]));
  const connectAt = Date.now();
  const consumer = kafka.consumer({
    groupId: cfg.groupId,
    readUncommitted: false,
    allowAutoTopicCreation: false,
    maxBytesPerPartition: cfg.maxBytesPerPartition,
    maxBytes: cfg.maxBytes,
    maxWaitTimeInMs: cfg.maxWaitTimeInMs,
  });
  let joinedAt = 0;
  let firstAt = 0;
  let records = 0;
  const advance = (partition: number, next: bigint) => {
    if (next > (position.get(partition) ?? 0n)) position.set(partition, next);
  };
  consumer.on(consumer.events.GROUP_JOIN, () => (joinedAt ||= Date.now()));
  // Batches of only markers never reach eachBatch.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) =>
    advance(payload.partition, BigInt(payload.lastOffset) + 1n),
  );
  await consumer.connect();
  await consumer.subscribe({ topic: cfg.topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      firstAt ||= Date.now();
      records += batch.messages.length;
      advance(batch.partition, BigInt(batch.lastOffset()) + 1n);
    },
  });
  const atEnd = () => [...ends].every(([p, end]) => (position.get(p) ?? 0n) >= end);
  while (!atEnd()) await new Promise((r) => setTimeout(r, 5));
  const doneAt = Date.now();
  await consumer.disconnect();
  await admin.deleteGroups([cfg.groupId]).catch(() => undefined);
  await admin.disconnect();
  const done: ChangelogReaderDone = { type: 'done', records, connectAt, joinedAt, firstAt, doneAt };
  send(done);
  process.on('message', (m: ChildMessage) => {
    if (m.type === 'stop') setTimeout(() => process.exit(0), 10);
  });
});
