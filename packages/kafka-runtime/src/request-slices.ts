import { TOPIC_MAX_MESSAGE_BYTES } from '@state-relay/contracts';
import type { Message } from 'kafkajs';

/**
 * Kafka's documented default of a topic's max.message.bytes (and the broker's message.max.bytes):
 * the largest record batch a partition accepts. kafkajs sends one batch per partition per request.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = TOPIC_MAX_MESSAGE_BYTES;

/** What a record adds to its key and value in a batch, generously: its framing plus a share of the batch header. */
export const RECORD_OVERHEAD_BYTES = 64;

/** Bytes of keys and values per produce request: well under DEFAULT_MAX_MESSAGE_BYTES. */
export const MAX_REQUEST_BYTES = 512 * 1024;

/**
 * Bytes of one partition's records in one produce request (its record batch): MAX_REQUEST_BYTES,
 * what a whole request held before, so no batch is bigger than then.
 */
export const MAX_PARTITION_BATCH_BYTES = MAX_REQUEST_BYTES;

/**
 * Bytes of one produce request across all its partitions. The broker bounds a batch, not a request
 * (socket.request.max.bytes is 100 MiB): a transaction's records for many partitions go in a few
 * requests instead of one round trip per 512 KiB, while every batch stays within
 * MAX_PARTITION_BATCH_BYTES.
 */
export const MAX_MULTI_PARTITION_REQUEST_BYTES = 8 * 1024 * 1024;

/** The bytes a message takes in a record batch (key, value, RECORD_OVERHEAD_BYTES; headers are not counted). */
export function recordBytes(m: Pick<Message, 'key' | 'value'>): number {
  return byteLength(m.key) + byteLength(m.value) + RECORD_OVERHEAD_BYTES;
}

/**
 * Splits items, in order, into slices of at most `maxBytes` (by `sizeOf`) and `maxCount` items.
 * kafkajs does not split a request into batches the broker accepts, so each slice is one request;
 * an item bigger than `maxBytes` goes alone.
 */
export function* boundedSlices<T>(
  items: readonly T[],
  sizeOf: (item: T) => number,
  { maxBytes, maxCount = Infinity }: { maxBytes: number; maxCount?: number },
): Generator<T[]> {
  let slice: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (slice.length > 0 && (bytes + size > maxBytes || slice.length >= maxCount)) {
      yield slice;
      slice = [];
      bytes = 0;
    }
    slice.push(item);
    bytes += size;
  }
  if (slice.length > 0) yield slice;
}

export type TopicMessages = { topic: string; messages: Message[] };

/**
 * Splits topic messages into produce requests in which each partition's batch holds at most
 * `maxPartitionBytes` and the whole request at most `maxRequestBytes` (key, value, headers and
 * RECORD_OVERHEAD_BYTES of each record). Each partition's records are cut, in order, into batches;
 * the n-th request carries the n-th batch of every partition (as many requests as that takes under
 * `maxRequestBytes`), so each partition's records stay in order across the requests sent one after
 * another. Keyed records without a partition count as one partition of their topic (the
 * partitioner may put them all in one). A record bigger than a bound goes in a batch of its own.
 */
export function* partitionSlicesOf(
  topicMessages: readonly TopicMessages[],
  { maxPartitionBytes, maxRequestBytes }: { maxPartitionBytes: number; maxRequestBytes: number },
): Generator<TopicMessages[]> {
  type Batch = { topic: string; messages: Message[]; bytes: number };
  const partitions = new Map<string, Batch[]>();
  for (const { topic, messages } of topicMessages) {
    for (const m of messages) {
      const key = `${topic}\u0000${m.partition ?? 'keyed'}`;
      let batches = partitions.get(key);
      if (!batches) partitions.set(key, (batches = []));
      const size = recordBytes(m) + headerBytes(m.headers);
      let last = batches[batches.length - 1];
      if (!last || (last.bytes > 0 && last.bytes + size > maxPartitionBytes)) {
        batches.push((last = { topic, messages: [], bytes: 0 }));
      }
      last.messages.push(m);
      last.bytes += size;
    }
  }
  const rounds = Math.max(0, ...[...partitions.values()].map((b) => b.length));
  for (let round = 0; round < rounds; round++) {
    let request: Batch[] = [];
    let bytes = 0;
    for (const batches of partitions.values()) {
      const batch = batches[round];
      if (!batch) continue;
      if (request.length > 0 && bytes + batch.bytes > maxRequestBytes) {
        yield byTopic(request);
        request = [];
        bytes = 0;
      }
      request.push(batch);
      bytes += batch.bytes;
    }
    if (request.length > 0) yield byTopic(request);
  }
}

/** One entry per topic, in the order the topics first appear. */
function byTopic(batches: ReadonlyArray<{ topic: string; messages: Message[] }>): TopicMessages[] {
  const topics = new Map<string, Message[]>();
  for (const { topic, messages } of batches) {
    const list = topics.get(topic);
    if (list) list.push(...messages);
    else topics.set(topic, [...messages]);
  }
  return [...topics].map(([topic, messages]) => ({ topic, messages }));
}

function headerBytes(headers: Message['headers']): number {
  if (!headers) return 0;
  let sum = 0;
  for (const [name, value] of Object.entries(headers)) {
    sum += Buffer.byteLength(name);
    for (const v of Array.isArray(value) ? value : [value]) sum += byteLength(v ?? null);
  }
  return sum;
}

function byteLength(b: Message['key'] | Message['value']): number {
  if (b === null || b === undefined) return 0;
  return typeof b === 'string' ? Buffer.byteLength(b) : b.length;
}
