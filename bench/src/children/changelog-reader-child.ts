import { runChild, type ChildMessage } from '../ipc';
import { kafkajs, PartitionReader, type Kafka } from '../lib';

export interface ChangelogReaderConfig {
  brokers: string[];
  topic: string;
  groupId: string;
  /** `consumer`: a kafkajs consumer in its own group; `direct`: kafka-runtime's PartitionReader, no group. */
  via: 'consumer' | 'direct';
  maxBytesPerPartition: number;
  maxBytes: number;
  maxWaitTimeInMs: number;
}

/** What the reader reports once it has reached the end of every partition (epoch ms). */
export interface ChangelogReaderDone extends ChildMessage {
  type: 'done';
  records: number;
  /** Before connecting; the group joined (direct: connected); the first records; every partition at its end. */
  connectAt: number;
  joinedAt: number;
  firstAt: number;
  doneAt: number;
}

/**
 * The ceiling restore is compared with: the changelog read from the beginning to the end
 * offsets read at the start, read_committed, counting records and touching nothing else. Either
 * with a bare kafkajs consumer in a throw-away group (kafkajs has no manual assignment), or with
 * the Fetch-level reader the processor's restore uses (kafka-runtime's PartitionReader, loaded at
 * run time: an internal module that may move).
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
  const connectAt = Date.now();
  const read = cfg.via === 'direct' ? readDirect : readWithConsumer;
  const r = await read(kafka, cfg, ends);
  await admin.deleteGroups([cfg.groupId]).catch(() => undefined);
  await admin.disconnect();
  const done: ChangelogReaderDone = { type: 'done', connectAt, ...r };
  send(done);
  process.on('message', (m: ChildMessage) => {
    if (m.type === 'stop') setTimeout(() => process.exit(0), 10);
  });
});

type ReadResult = Pick<ChangelogReaderDone, 'records' | 'joinedAt' | 'firstAt' | 'doneAt'>;

async function readWithConsumer(
  kafka: Kafka,
  cfg: ChangelogReaderConfig,
  ends: Map<number, bigint>,
): Promise<ReadResult> {
  const position = new Map([...ends.keys()].map((p) => [p, 0n]));
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
  return { records, joinedAt, firstAt, doneAt };
}

/** kafka-runtime's PartitionReader, as much of it as this reader uses. */
async function readDirect(kafka: Kafka, cfg: ChangelogReaderConfig, ends: Map<number, bigint>): Promise<ReadResult> {
  const reader = await PartitionReader.open(kafka, cfg.topic, {
    maxBytesPerPartition: cfg.maxBytesPerPartition,
    maxBytes: cfg.maxBytes,
    maxWaitTimeMs: cfg.maxWaitTimeInMs,
  });
  if (!reader) throw new Error('PartitionReader.open returned null: kafkajs internals are not as it expects');
  const joinedAt = Date.now();
  const position = new Map([...ends.keys()].map((p) => [p, 0n]));
  let firstAt = 0;
  let records = 0;
  try {
    for (;;) {
      const pending = new Map([...position].filter(([p, at]) => at < ends.get(p)!));
      if (pending.size === 0) break;
      for (const part of await reader.fetch(pending)) {
        if (part.messages.length > 0) firstAt ||= Date.now();
        records += part.messages.length;
        if (part.next > position.get(part.partition)!) position.set(part.partition, part.next);
      }
    }
  } finally {
    await reader.close();
  }
  return { records, joinedAt, firstAt, doneAt: Date.now() };
}
