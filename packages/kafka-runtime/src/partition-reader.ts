import type { Kafka, KafkaMessage } from 'kafkajs';
import { KafkajsShapeError, OffsetOutOfRangeError } from './errors';
import { offsetOutOfRangePartition, openTopicFetcher, type TopicFetcher } from './kafkajs';

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

/**
 * Reads partitions of one topic from given offsets with read_committed Fetch requests to their
 * leaders, through the kafkajs adapter (TopicFetcher), without a consumer group (see DECISIONS.md,
 * 'Restore fetches without a consumer group'). `open` returns null when kafkajs's internals are
 * not as expected; the caller then falls back to a consumer group.
 */
export class PartitionReader {
  private constructor(
    private readonly fetcher: TopicFetcher,
    private readonly topic: string,
    private readonly options: PartitionReaderOptions,
  ) {}

  static async open(kafka: Kafka, topic: string, options: PartitionReaderOptions): Promise<PartitionReader | null> {
    try {
      return new PartitionReader(await openTopicFetcher(kafka, topic), topic, options);
    } catch (err) {
      if (err instanceof KafkajsShapeError) return null;
      throw err;
    }
  }

  /** One Fetch per leader for `positions` (partition -> next offset); parts in response order. */
  async fetch(positions: Map<number, bigint>): Promise<FetchedPart[]> {
    const { topic, options } = this;
    const leaders = this.fetcher.leaders([...positions.keys()]);
    const perLeader = await Promise.all(
      Object.entries(leaders).map(async ([nodeId, partitions]) => {
        const batches = await this.fetcher
          .fetch(nodeId, {
            maxWaitTime: options.maxWaitTimeMs ?? 50,
            maxBytes: options.maxBytes,
            partitions: partitions.map((partition) => ({
              partition,
              fetchOffset: positions.get(partition)!.toString(),
              maxBytes: options.maxBytesPerPartition,
            })),
          })
          .catch((err: unknown) => {
            // kafkajs fails the whole fetch for the first partition with an error (fetch v0 parse).
            const partition = offsetOutOfRangePartition(err);
            const at = partition === undefined ? undefined : positions.get(partition);
            throw at === undefined ? err : new OffsetOutOfRangeError(topic, partition!, at, err);
          });
        const parts: FetchedPart[] = [];
        for (const batch of batches) {
          const from = positions.get(batch.partition);
          if (from === undefined) continue;
          let next: bigint;
          if (batch.lastOffset !== undefined) next = BigInt(batch.lastOffset) + 1n;
          // Records only before `from` (a compacted batch that starts earlier): nothing is at `from`.
          else if (batch.rawCount > 0) next = from + 1n;
          // Nothing at or after `from` below the last stable offset.
          else next = from;
          const stable = BigInt(batch.lastStableOffset ?? '-1');
          parts.push({
            partition: batch.partition,
            messages: batch.messages,
            next,
            stable: stable >= 0n ? stable : BigInt(batch.highWatermark),
          });
        }
        return parts;
      }),
    );
    return perLeader.flat();
  }

  /** After a failed fetch: leaders may have moved. */
  async refresh(): Promise<void> {
    await this.fetcher.refreshMetadata();
  }

  async close(): Promise<void> {
    await this.fetcher.close();
  }
}
