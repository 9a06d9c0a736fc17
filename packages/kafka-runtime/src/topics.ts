import { Admin, ConfigResourceTypes, ITopicConfig } from 'kafkajs';
import { KafkaRuntimeError, KafkaRuntimeErrorCodes, NotCoPartitionedError } from './errors';

export interface TopicRequirement {
  topic: string;
  partitions: number;
  compacted?: boolean;
  /** Extra topic configs, e.g. retention. */
  configs?: Record<string, string>;
  /** -1: the broker's default.replication.factor (read from the broker: kafkajs's CreateTopics v3 cannot say -1). */
  replicationFactor?: number;
}

/** Creates the topics that do not exist yet; existing ones are left as they are. Returns the ones created. */
export async function ensureTopics(admin: Admin, required: TopicRequirement[]): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const absent = required.filter((r) => !existing.has(r.topic));
  const brokerDefault = absent.some((r) => (r.replicationFactor ?? 1) === -1)
    ? await brokerDefaultReplicationFactor(admin)
    : 1;
  const missing: ITopicConfig[] = absent.map((r) => ({
    topic: r.topic,
    numPartitions: r.partitions,
    replicationFactor: r.replicationFactor === -1 ? brokerDefault : (r.replicationFactor ?? 1),
    configEntries: [
      ...(r.compacted ? [{ name: 'cleanup.policy', value: 'compact' }] : []),
      ...Object.entries(r.configs ?? {}).map(([name, value]) => ({ name, value })),
    ],
  }));
  if (missing.length > 0) {
    try {
      await admin.createTopics({ topics: missing, waitForLeaders: false });
    } catch (err) {
      // Another instance may have created them in the meantime; that is fine.
      if ((err as { type?: string }).type !== 'TOPIC_ALREADY_EXISTS') throw err;
    }
    await waitForLeaders(
      admin,
      missing.map((m) => m.topic),
    );
  }
  return missing.map((m) => m.topic);
}

/**
 * The broker's default.replication.factor (of the first broker the cluster lists). kafkajs sends
 * CreateTopics v3 at most, where -1 ("the broker's default", KIP-464, v4) is refused.
 */
export async function brokerDefaultReplicationFactor(
  admin: Pick<Admin, 'describeCluster' | 'describeConfigs'>,
): Promise<number> {
  const { brokers } = await admin.describeCluster();
  const id = [...brokers].sort((a, b) => a.nodeId - b.nodeId)[0]?.nodeId;
  if (id === undefined) return 1;
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.BROKER, name: String(id), configNames: ['default.replication.factor'] }],
  });
  const value = Number(
    resources[0]?.configEntries.find((e) => e.configName === 'default.replication.factor')?.configValue,
  );
  return Number.isInteger(value) && value > 0 ? value : 1;
}

/** The topics of `names` the cluster does not have. */
export async function missingTopics(admin: Pick<Admin, 'listTopics'>, names: string[]): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  return names.filter((n) => !existing.has(n));
}

/** What a broker answers while a partition it was just made leader of is not served yet. */
const LEADERSHIP_PENDING = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_FOR_PARTITION']);

/**
 * Waits until every partition of `topics` has a leader that serves it, i.e. until each topic's
 * offsets can be listed: kafkajs's own wait gives up too early (see DECISIONS.md, 'Topic creation
 * waits until offsets can be listed').
 */
export async function waitForLeaders(admin: Admin, topics: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 50; ; delay = Math.min(1_000, delay * 2)) {
    try {
      const { topics: meta } = await admin.fetchTopicMetadata({ topics });
      if (meta.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) {
        for (const topic of topics) await admin.fetchTopicOffsets(topic);
        return;
      }
    } catch (err) {
      if (!LEADERSHIP_PENDING.has((err as { type?: string }).type ?? '')) throw err;
    }
    if (Date.now() > deadline) {
      throw new KafkaRuntimeError(
        KafkaRuntimeErrorCodes.TOPICS_NOT_READY,
        `topics ${topics.join(', ')} have no serving leader after ${timeoutMs} ms`,
        { retriable: true },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** Partition count per topic, from the cluster's metadata. */
export async function partitionCounts(admin: Admin, topics: string[]): Promise<Record<string, number>> {
  const { topics: meta } = await admin.fetchTopicMetadata({ topics });
  return Object.fromEntries(meta.map((t) => [t.name, t.partitions.length]));
}

/** Throws NotCoPartitionedError naming every count when the topics differ; returns the common count. */
export async function assertCoPartitioned(admin: Admin, topics: string[]): Promise<number> {
  const counts = await partitionCounts(admin, topics);
  const distinct = new Set(Object.values(counts));
  if (distinct.size !== 1) throw new NotCoPartitionedError(counts);
  return [...distinct][0]!;
}

/**
 * End offset per partition of a topic, as bigint: the last stable offset (LSO), what a
 * read_committed consumer can reach. kafkajs's admin has no isolation level of its own, so its
 * ListOffsets (v2+) takes the request's default, READ_COMMITTED (pinned by runtime.itest.ts).
 */
export async function endOffsets(admin: Pick<Admin, 'fetchTopicOffsets'>, topic: string): Promise<Map<number, bigint>> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
}

/** One config of each topic as the broker reports it (its own value or the broker's default). */
export async function topicConfigValues(
  admin: Pick<Admin, 'describeConfigs'>,
  topics: string[],
  name: string,
): Promise<Map<string, string | undefined>> {
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((topic) => ({ type: ConfigResourceTypes.TOPIC, name: topic, configNames: [name] })),
  });
  return new Map(
    resources.map((r) => [r.resourceName, r.configEntries.find((e) => e.configName === name)?.configValue]),
  );
}
