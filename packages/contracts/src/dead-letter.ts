export const DEAD_LETTER_HEADERS = {
  reason: 'dlq.reason',
  code: 'dlq.code',
  sourceTopic: 'dlq.source.topic',
  sourcePartition: 'dlq.source.partition',
  sourceOffset: 'dlq.source.offset',
  /** Epoch ms, as a decimal string. */
  failedAt: 'dlq.failed.at',
} as const;

/** Kafka header values as kafkajs models them (IHeaders), without depending on kafkajs. */
export type HeaderValue = string | Buffer | Array<string | Buffer>;
export type MessageHeaders = Record<string, HeaderValue | undefined>;

export interface DeadLetterSource {
  topic: string;
  partition: number;
  /** Kafka offsets are strings in kafkajs (int64). */
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: MessageHeaders;
}

/** A kafkajs-shaped message for the dead-letter topic. */
export interface DeadLetterMessage {
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, HeaderValue>;
}

const MAX_REASON_LENGTH = 1000;

/**
 * The dead letter for a record that could not be decoded or validated: the original key and
 * value bytes untouched (so it can be replayed once the cause is fixed), the original
 * headers kept, and why and where it failed in `dlq.*` headers (which win over any
 * same-named original header, e.g. from an earlier dead-lettering).
 */
export function deadLetterRecord(
  source: DeadLetterSource,
  error: { code: string; reason: string },
  now: number,
): DeadLetterMessage {
  const headers: Record<string, HeaderValue> = {};
  for (const [name, v] of Object.entries(source.headers ?? {})) if (v !== undefined) headers[name] = v;
  const reason =
    error.reason.length > MAX_REASON_LENGTH ? `${error.reason.slice(0, MAX_REASON_LENGTH)}…` : error.reason;
  headers[DEAD_LETTER_HEADERS.reason] = reason;
  headers[DEAD_LETTER_HEADERS.code] = error.code;
  headers[DEAD_LETTER_HEADERS.sourceTopic] = source.topic;
  headers[DEAD_LETTER_HEADERS.sourcePartition] = String(source.partition);
  headers[DEAD_LETTER_HEADERS.sourceOffset] = source.offset;
  headers[DEAD_LETTER_HEADERS.failedAt] = String(now);
  return { key: source.key, value: source.value, headers };
}
