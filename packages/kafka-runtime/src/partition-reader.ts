import type { Kafka, KafkaMessage } from 'kafkajs';
import { OffsetOutOfRangeError, offsetOutOfRangePartition } from './errors';

/**
 * Reads partitions of one topic from given offsets with Fetch requests to their leaders,
 * read_committed, without a consumer group: no JoinGroup/SyncGroup round (which waits the
 * broker's group.initial.rebalance.delay.ms, 3 s by default, for a group of one), no
 * heartbeats, no pause bookkeeping. kafkajs has no public manual assignment, so this uses its
 * Cluster and Broker the way its consumer does (kafkajs 2.2.4: src/index.js createCluster,
 * src/cluster, src/broker fetch) and its Batch, which drops aborted records and transaction
 * markers. `open` returns null when those internals are not as expected; the caller then falls
 * back to a consumer group.
 */

/** kafkajs keeps its cluster factory under this symbol (`PRIVATE.CREATE_CLUSTER` in src/index.js). */
const CREATE_CLUSTER = 'private:Kafka:createCluster';
/** src/protocol/isolationLevel.js */
const READ_COMMITTED = 1;

interface FetchPartitionData {
  partition: number;
  highWatermark: string;
  lastStableOffset?: string;
  messages: Array<KafkaMessage & { isControlRecord?: boolean }>;
  abortedTransactions: unknown[];
}
interface BrokerInternals {
  fetch(request: {
    isolationLevel: number;
    maxWaitTime: number;
    minBytes: number;
    maxBytes: number;
    topics: Array<{ topic: string; partitions: Array<{ partition: number; fetchOffset: string; maxBytes: number }> }>;
  }): Promise<{ responses: Array<{ topicName: string; partitions: FetchPartitionData[] }> }>;
}
interface ClusterInternals {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(args: { nodeId: string }): Promise<BrokerInternals>;
}
interface BatchInternals {
  messages: KafkaMessage[];
  rawMessages: unknown[];
  isEmptyIncludingFiltered(): boolean;
  lastOffset(): string;
}
type BatchClass = new (topic: string, fetchedOffset: string, data: FetchPartitionData) => BatchInternals;

/** One partition's part of a fetch: its records (committed, no markers) and where to read next. */
export interface FetchedPart {
  partition: number;
  messages: KafkaMessage[];
  /** The offset after everything the fetch returned for the partition, markers and aborted records included. */
  next: bigint;
  /** The partition's last stable offset (read_committed sees nothing at or past it). */
  stable: bigint;
}

export interface PartitionReaderOptions {
  /** Bytes per partition per fetch (KIP-74: a bigger first batch still comes whole). */
  maxBytesPerPartition: number;
  /** Bytes per fetch response. */
  maxBytes: number;
  maxWaitTimeMs?: number;
}

export class PartitionReader {
  private constructor(
    private readonly cluster: ClusterInternals,
    private readonly Batch: BatchClass,
    private readonly topic: string,
    private readonly options: PartitionReaderOptions,
  ) {}

  static async open(kafka: Kafka, topic: string, options: PartitionReaderOptions): Promise<PartitionReader | null> {
    const holder = kafka as unknown as Record<symbol, unknown>;
    const key = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER);
    const create = key ? holder[key] : undefined;
    let Batch: BatchClass;
    try {
      Batch = require('kafkajs/src/consumer/batch') as BatchClass;
    } catch {
      return null;
    }
    if (typeof create !== 'function' || typeof Batch !== 'function') return null;
    const cluster = (create as (o: object) => ClusterInternals)({ allowAutoTopicCreation: false });
    if (typeof cluster.findLeaderForPartitions !== 'function' || typeof cluster.findBroker !== 'function') return null;
    await cluster.connect();
    try {
      await cluster.addTargetTopic(topic);
    } catch (err) {
      await cluster.disconnect().catch(() => undefined);
      throw err;
    }
    return new PartitionReader(cluster, Batch, topic, options);
  }

  /** One Fetch per leader for `positions` (partition -> next offset); parts in response order. */
  async fetch(positions: Map<number, bigint>): Promise<FetchedPart[]> {
    const { topic, options } = this;
    const leaders = this.cluster.findLeaderForPartitions(topic, [...positions.keys()]);
    const perLeader = await Promise.all(
      Object.entries(leaders).map(async ([nodeId, partitions]) => {
        const broker = await this.cluster.findBroker({ nodeId });
        const requested = partitions.map((partition) => ({
          partition,
          fetchOffset: positions.get(partition)!.toString(),
          maxBytes: options.maxBytesPerPartition,
        }));
        const { responses } = await broker
          .fetch({
            isolationLevel: READ_COMMITTED,
            maxWaitTime: options.maxWaitTimeMs ?? 50,
            minBytes: 1,
            maxBytes: options.maxBytes,
            topics: [{ topic, partitions: requested }],
          })
          .catch((err: unknown) => {
            // kafkajs fails the whole fetch for the first partition with an error (fetch v0 parse).
            const partition = offsetOutOfRangePartition(err);
            const at = partition === undefined ? undefined : positions.get(partition);
            throw at === undefined ? err : new OffsetOutOfRangeError(topic, partition!, at, err);
          });
        const parts: FetchedPart[] = [];
        for (const { topicName, partitions: data } of responses) {
          if (topicName !== topic) continue;
          for (const d of data) {
            const from = positions.get(d.partition);
            if (from === undefined) continue;
            const batch = new this.Batch(topic, from.toString(), d);
            let next: bigint;
            if (!batch.isEmptyIncludingFiltered()) next = BigInt(batch.lastOffset()) + 1n;
            // Records only before `from` (a compacted batch that starts earlier): nothing is at `from`.
            else if (batch.rawMessages.length > 0) next = from + 1n;
            // Nothing at or after `from` below the last stable offset.
            else next = from;
            const stable = BigInt(d.lastStableOffset ?? '-1');
            parts.push({
              partition: d.partition,
              messages: batch.messages,
              next,
              stable: stable >= 0n ? stable : BigInt(d.highWatermark),
            });
          }
        }
        return parts;
      }),
    );
    return perLeader.flat();
  }

  /** After a failed fetch: leaders may have moved. */
  async refresh(): Promise<void> {
    await this.cluster.refreshMetadata();
  }

  async close(): Promise<void> {
    await this.cluster.disconnect().catch(() => undefined);
  }
}
