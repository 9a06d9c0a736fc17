import { join } from 'node:path';
import {
  createTopics,
  decodeEvent,
  deploymentTopics,
  readTopic,
  newDeployment as newTopics,
  type Admin,
  type Deployment as Topics,
  type Kafka,
  type KeyedEvent,
  type Message,
} from './lib';

/** Replicated topics (the three-broker cluster); absent: replication factor 1, the broker's min ISR. */
export interface TopicReplication {
  factor: number;
  minInsyncReplicas: number;
}

/** The topics, consumer group and state directory of one processor deployment. */
export interface Deployment extends Topics {
  stateDir: string;
  replication?: TopicReplication;
}

export function newDeployment(
  name: string,
  partitions: number,
  workDir: string,
  replication?: TopicReplication,
): Deployment {
  const topics = newTopics(`bench-${name}`, partitions);
  return { ...topics, stateDir: join(workDir, topics.appId), ...(replication ? { replication } : {}) };
}

/** The deployment's topics as the processor's provisioning creates them, replicated as `d.replication` says. */
export async function createDeploymentTopics(admin: Admin, d: Deployment, extra: string[] = []): Promise<void> {
  const r = d.replication;
  const specs = deploymentTopics(d, extra).map((s) =>
    r
      ? {
          ...s,
          replicationFactor: r.factor,
          configs: { ...s.configs, 'min.insync.replicas': String(r.minInsyncReplicas) },
        }
      : s,
  );
  await createTopics(admin, specs);
}

/**
 * Produces every message in order, keyed (kafkajs's default partitioner, the one the load and
 * the processor's inputs use). One request at a time: concurrent sends could reorder a
 * partition, and an `activity` before its account's `signed_up` is a different input.
 * Returns the time taken.
 */
export async function produceAll(kafka: Kafka, topic: string, messages: Message[], chunk = 5_000): Promise<number> {
  const started = Date.now();
  const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    for (let i = 0; i < messages.length; i += chunk)
      await producer.send({ topic, messages: messages.slice(i, i + chunk) });
  } finally {
    await producer.disconnect();
  }
  return Date.now() - started;
}

/** Waits until `groupId` has committed offsets at the end of every partition of `topics`. */
export async function waitCommittedToEnd(
  admin: Admin,
  groupId: string,
  topics: string[],
  timeoutMs = 600_000,
): Promise<number> {
  const ends = new Map<string, Map<number, bigint>>();
  for (const topic of topics) {
    ends.set(topic, new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)])));
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const committed = await admin.fetchOffsets({ groupId, topics });
    const at = new Map(
      committed.flatMap(({ topic, partitions }) => partitions.map((p) => [`${topic}/${p.partition}`, p.offset])),
    );
    const done = [...ends].every(([topic, partitions]) =>
      [...partitions].every(([partition, end]) => {
        const offset = at.get(`${topic}/${partition}`);
        return end === 0n || (offset !== undefined && offset !== '-1' && BigInt(offset) >= end);
      }),
    );
    if (done) return Date.now();
    if (Date.now() > deadline)
      throw new Error(`group ${groupId} did not commit to the end of ${topics.join(', ')} in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** How many records `topic` holds (the sum of its end offsets: for a topic no transaction writes to). */
export async function recordCount(admin: Admin, topic: string): Promise<number> {
  return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
}

/** Every event of an events topic as written, each partition in offset order. */
export async function writtenEvents(kafka: Kafka, topic: string): Promise<KeyedEvent[]> {
  const records = await readTopic(kafka, topic, { timeoutMs: 300_000 });
  return records.map((r) => ({
    key: r.key!,
    event: decodeEvent(r.key === null ? null : Buffer.from(r.key), r.value === null ? null : Buffer.from(r.value)),
  }));
}
