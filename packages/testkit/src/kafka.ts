import { Admin, Kafka, KafkaMessage, logLevel, type KafkaConfig } from 'kafkajs';
import { waitUntil } from './wait';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

/** `security`: TLS and SASL for a secured listener (startSecureKafka's `client`). */
export function kafkaClient(
  brokers: string[],
  clientId = 'state-relay-test',
  security: Pick<KafkaConfig, 'ssl' | 'sasl'> = {},
): Kafka {
  // kafkajs logs every retried connection error; tests assert on outcomes, so keep it quiet unless asked.
  const level = process.env.STATE_RELAY_TEST_KAFKA_LOG ? logLevel.INFO : logLevel.NOTHING;
  return new Kafka({ clientId, brokers, logLevel: level, retry: { retries: 8 }, ...security });
}

export interface TopicSpec {
  topic: string;
  partitions?: number;
  compacted?: boolean;
  /** Topic configs, e.g. max.message.bytes. */
  configs?: Record<string, string>;
  /** 1 by default (the single test broker); 3 on a three-node cluster. */
  replicationFactor?: number;
}

export async function createTopics(admin: Admin, specs: TopicSpec[]): Promise<void> {
  await admin.createTopics({
    waitForLeaders: false,
    topics: specs.map((s) => ({
      topic: s.topic,
      numPartitions: s.partitions ?? 1,
      replicationFactor: s.replicationFactor ?? 1,
      configEntries: [
        ...(s.compacted ? [{ name: 'cleanup.policy', value: 'compact' }] : []),
        ...Object.entries(s.configs ?? {}).map(([name, value]) => ({ name, value })),
      ],
    })),
  });
  // kafkajs's waitForLeaders gives up on UNKNOWN_TOPIC_OR_PARTITION, which a busy broker
  // answers for a topic it has just created: wait for every leader here instead.
  const topics = specs.map((s) => s.topic);
  await waitUntil(
    async () => {
      const meta = await admin.fetchTopicMetadata({ topics }).catch(() => undefined);
      if (!meta?.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return false;
      // A named leader may not serve the partition yet (ListOffsets: NOT_LEADER_FOR_PARTITION).
      return Promise.all(topics.map((t) => admin.fetchTopicOffsets(t))).then(
        () => true,
        () => false,
      );
    },
    { timeoutMs: 30_000, intervalMs: 100, message: `leaders for ${topics.join(', ')}` },
  );
}

export interface ConsumedRecord {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
}

function toRecord(topic: string, partition: number, m: KafkaMessage): ConsumedRecord {
  const headers: Record<string, string> = {};
  for (const [name, v] of Object.entries(m.headers ?? {})) {
    if (v !== undefined) headers[name] = Array.isArray(v) ? v.map(String).join(',') : String(v);
  }
  return {
    topic,
    partition,
    offset: m.offset,
    key: m.key ? m.key.toString('utf8') : null,
    value: m.value ? m.value.toString('utf8') : null,
    headers,
  };
}

export interface ReadTopicOptions {
  /** Stop once this many records arrived (fails when the read stops moving, with how many did). */
  count?: number;
  /** Without `count`: read until the topic's end offsets seen at the start. */
  isolation?: 'read_committed' | 'read_uncommitted';
  /** Give up after this long without progress (default 30 s); a read that keeps moving is never cut. */
  timeoutMs?: number;
}

/**
 * Reads a topic from the beginning with a throw-away group: until `count` records arrived,
 * or, without a count, up to the end offsets the topic had when the call started.
 */
export async function readTopic(kafka: Kafka, topic: string, opts: ReadTopicOptions = {}): Promise<ConsumedRecord[]> {
  const readUncommitted = opts.isolation === 'read_uncommitted';
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const groupId = `read-${topic}-${Math.random().toString(36).slice(2)}`;
  const consumer = kafka.consumer({ groupId, readUncommitted, maxWaitTimeInMs: 100 });
  const records: ConsumedRecord[] = [];
  const next = new Map<number, bigint>();
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    // Batches holding only transaction markers or aborted records never reach eachBatch;
    // the end-of-batch event still reports how far the consumer got.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      next.set(payload.partition, BigInt(payload.lastOffset) + 1n);
    });
    // kafkajs re-delivers from the last committed offset when the group rebalances (a slow
    // broker can make a lone member rejoin); a record is counted once per partition and offset.
    const seen = new Set<string>();
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          const id = `${batch.partition}:${m.offset}`;
          if (seen.has(id)) continue;
          seen.add(id);
          records.push(toRecord(batch.topic, batch.partition, m));
        }
      },
    });
    const done = () => {
      if (opts.count !== undefined) return records.length >= opts.count;
      return ends.every((e) => BigInt(e.high) === 0n || (next.get(e.partition) ?? 0n) >= BigInt(e.high));
    };
    // The timeout counts from the last progress, not from the start: a big topic read beside other
    // deployments on a loaded machine goes on while it moves; a read that stops moving (stuck at an
    // open transaction, or nothing more arrives) gives up after `timeoutMs` without progress.
    const stallMs = opts.timeoutMs ?? 30_000;
    let progress = '';
    let movedAt = Date.now();
    while (!done()) {
      const now = `${records.length}/${[...next.values()].join(',')}`;
      if (now !== progress) [progress, movedAt] = [now, Date.now()];
      if (Date.now() - movedAt > stallMs) {
        // How far it got when it gave up (a slow read and a read stuck at an open transaction differ here).
        const reached = ends.map((e) => `${e.partition}: ${next.get(e.partition) ?? 0n}/${e.high}`).join(', ');
        throw new Error(
          `no progress for ${stallMs} ms waiting for ${opts.count ?? 'end of'} records on ${topic} (got ${records.length} records; next offset per partition ${reached})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await consumer.disconnect();
  }
  return records;
}
