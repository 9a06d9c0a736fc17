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

/** Splits topic messages, in order, into requests of at most `maxBytes` (a bigger record goes alone). */
export function* slicesOf(topicMessages: readonly TopicMessages[], maxBytes: number): Generator<TopicMessages[]> {
  const flat = topicMessages.flatMap(({ topic, messages }) => messages.map((m) => ({ topic, m })));
  for (const slice of boundedSlices(flat, ({ m }) => recordBytes(m), { maxBytes })) {
    const grouped: TopicMessages[] = [];
    for (const { topic, m } of slice) {
      const last = grouped[grouped.length - 1];
      if (last?.topic === topic) last.messages.push(m);
      else grouped.push({ topic, messages: [m] });
    }
    yield grouped;
  }
}

function byteLength(b: Message['key'] | Message['value']): number {
  if (b === null || b === undefined) return 0;
  return typeof b === 'string' ? Buffer.byteLength(b) : b.length;
}
