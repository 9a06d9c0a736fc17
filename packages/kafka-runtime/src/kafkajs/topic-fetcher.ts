import type { Kafka, KafkaMessage } from 'kafkajs';
import { KafkajsShapeError } from '../errors';
import { clusterFactoryOf, withMethods } from './internals';
import { assertSupportedKafkajs } from './version';

// Fetch requests to partition leaders with kafkajs's own Cluster, Broker and Batch, the way its
// consumer uses them (kafkajs 2.2.4: src/cluster, src/broker fetch, src/consumer/batch.js): kafkajs
// has no public manual assignment.

/** src/protocol/isolationLevel.js */
export const READ_COMMITTED = 1;

/** One partition of a Fetch response as kafkajs's Broker.fetch decodes it. */
export interface FetchPartitionData {
  partition: number;
  highWatermark: string;
  lastStableOffset?: string;
  messages: Array<KafkaMessage & { isControlRecord?: boolean }>;
  abortedTransactions: unknown[];
}
interface Broker {
  fetch(request: {
    isolationLevel: number;
    maxWaitTime: number;
    minBytes: number;
    maxBytes: number;
    topics: Array<{ topic: string; partitions: FetchRequest['partitions'] }>;
  }): Promise<{ responses: Array<{ topicName: string; partitions: FetchPartitionData[] }> }>;
}
interface Cluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(args: { nodeId: string }): Promise<Broker>;
}
/** The methods of kafkajs's Cluster a TopicFetcher calls. */
export const TOPIC_FETCHER_CLUSTER_METHODS = [
  'connect',
  'disconnect',
  'addTargetTopic',
  'refreshMetadata',
  'findLeaderForPartitions',
  'findBroker',
] as const satisfies readonly (keyof Cluster)[];

interface Batch {
  messages: KafkaMessage[];
  rawMessages: unknown[];
  isEmptyIncludingFiltered(): boolean;
  lastOffset(): string;
}
type BatchClass = new (topic: string, fetchedOffset: string, data: FetchPartitionData) => Batch;

export interface FetchRequest {
  maxWaitTime: number;
  maxBytes: number;
  partitions: Array<{ partition: number; fetchOffset: string; maxBytes: number }>;
}

/** One partition's part of a read_committed Fetch response. */
export interface FetchedBatch {
  partition: number;
  /** Committed records at or after the fetch offset, no transaction markers. */
  messages: KafkaMessage[];
  /** The last offset at or after the fetch offset, markers and aborted records included; undefined if none. */
  lastOffset: string | undefined;
  /** How many records the response held for the partition, before any was dropped. */
  rawCount: number;
  highWatermark: string;
  lastStableOffset: string | undefined;
}

/**
 * Decodes one partition of a Fetch response with kafkajs's Batch, which drops records before the
 * fetch offset, aborted records and transaction markers. KafkajsShapeError when Batch is missing
 * or has another shape.
 */
export function batchReader(): (topic: string, fetchOffset: string, data: FetchPartitionData) => FetchedBatch {
  assertSupportedKafkajs();
  let Batch: unknown;
  try {
    Batch = require('kafkajs/src/consumer/batch');
  } catch (err) {
    throw new KafkajsShapeError('the module kafkajs/src/consumer/batch', err);
  }
  if (typeof Batch !== 'function') throw new KafkajsShapeError('kafkajs/src/consumer/batch (not a class)');
  withMethods<Batch>(Batch.prototype, 'Batch', ['isEmptyIncludingFiltered', 'lastOffset']);
  const BatchClass = Batch as BatchClass;
  return (topic, fetchOffset, data) => {
    const batch = new BatchClass(topic, fetchOffset, data);
    return {
      partition: data.partition,
      messages: batch.messages,
      lastOffset: batch.isEmptyIncludingFiltered() ? undefined : batch.lastOffset(),
      rawCount: batch.rawMessages.length,
      highWatermark: data.highWatermark,
      lastStableOffset: data.lastStableOffset,
    };
  };
}

/** Fetches from one topic's partition leaders, without a consumer group. */
export interface TopicFetcher {
  /** Leader node id -> the partitions it leads, from the cluster's metadata. */
  leaders(partitions: number[]): Record<string, number[]>;
  /** One read_committed Fetch to `nodeId`; the requested partitions' batches, in response order. */
  fetch(nodeId: string, request: FetchRequest): Promise<FetchedBatch[]>;
  refreshMetadata(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A connected TopicFetcher for `topic` on a cluster of `kafka`'s own. KafkajsShapeError (before
 * any connection) when kafkajs's internals are not as expected.
 */
export async function openTopicFetcher(kafka: Kafka, topic: string): Promise<TopicFetcher> {
  const { factory } = clusterFactoryOf(kafka);
  const readBatch = batchReader();
  const cluster = withMethods<Cluster>(
    factory({ allowAutoTopicCreation: false }),
    'Cluster',
    TOPIC_FETCHER_CLUSTER_METHODS,
  );
  await cluster.connect();
  try {
    await cluster.addTargetTopic(topic);
  } catch (err) {
    await cluster.disconnect().catch(() => undefined);
    throw err;
  }
  return {
    leaders: (partitions) => cluster.findLeaderForPartitions(topic, partitions),
    async fetch(nodeId, request) {
      const broker = await cluster.findBroker({ nodeId });
      const { responses } = await broker.fetch({
        isolationLevel: READ_COMMITTED,
        maxWaitTime: request.maxWaitTime,
        minBytes: 1,
        maxBytes: request.maxBytes,
        topics: [{ topic, partitions: request.partitions }],
      });
      const fetchOffsets = new Map(request.partitions.map((p) => [p.partition, p.fetchOffset]));
      const batches: FetchedBatch[] = [];
      for (const { topicName, partitions } of responses) {
        if (topicName !== topic) continue;
        for (const data of partitions) {
          const fetchOffset = fetchOffsets.get(data.partition);
          if (fetchOffset === undefined) continue;
          batches.push(readBatch(topic, fetchOffset, data));
        }
      }
      return batches;
    },
    refreshMetadata: () => cluster.refreshMetadata(),
    close: () => cluster.disconnect().catch(() => undefined),
  };
}
