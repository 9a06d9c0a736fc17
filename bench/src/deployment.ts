import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { changelogTopicName, ensureTopics, type Admin, type Kafka, type Message } from './lib';

/** The topics, consumer group and state directory of one processor deployment. */
export interface Deployment {
  appId: string;
  eventsTopic: string;
  commandsTopic: string;
  resultsTopic: string;
  deadLetterTopic: string;
  changelogTopic: string;
  partitions: number;
  stateDir: string;
}

export function newDeployment(name: string, partitions: number, workDir: string): Deployment {
  const appId = `bench-${name}-${randomBytes(3).toString('hex')}`;
  return {
    appId,
    eventsTopic: `${appId}-events`,
    commandsTopic: `${appId}-commands`,
    resultsTopic: `${appId}-results`,
    deadLetterTopic: `${appId}-dlq`,
    changelogTopic: changelogTopicName(appId, 'accounts'),
    partitions,
    stateDir: join(workDir, appId),
  };
}

/** The topics as the processor itself would create them (so seeding can happen before it starts). */
export async function createDeploymentTopics(admin: Admin, d: Deployment, extra: string[] = []): Promise<void> {
  await createTopicsRetrying(admin, [
    ...extra.map((topic) => ({ topic, partitions: d.partitions })),
    { topic: d.eventsTopic, partitions: d.partitions },
    { topic: d.commandsTopic, partitions: d.partitions },
    { topic: d.changelogTopic, partitions: d.partitions, compacted: true },
    { topic: d.resultsTopic, partitions: d.partitions },
    { topic: d.deadLetterTopic, partitions: 1 },
  ]);
}

/**
 * ensureTopics, retried: right after the broker starts, waiting for the new topics' leaders
 * can fail with a retriable UNKNOWN_TOPIC_OR_PARTITION that kafkajs gives up on.
 */
export async function createTopicsRetrying(admin: Admin, topics: Parameters<typeof ensureTopics>[1]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await ensureTopics(admin, topics);
      const { topics: meta } = await admin.fetchTopicMetadata({ topics: topics.map((t) => t.topic) });
      if (meta.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
    } catch (err) {
      if (attempt >= 10 || (err as { retriable?: boolean }).retriable === false) throw err;
    }
    await new Promise((r) => setTimeout(r, 500 * attempt));
  }
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
