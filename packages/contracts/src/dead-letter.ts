export const DEAD_LETTER_HEADERS = {
  reason: 'dlq.reason',
  code: 'dlq.code',
  sourceTopic: 'dlq.source.topic',
  sourcePartition: 'dlq.source.partition',
  sourceOffset: 'dlq.source.offset',
  /** Epoch ms, as a decimal string. */
  failedAt: 'dlq.failed.at',
  /** Set when the dead letter left out original parts to fit its topic: e.g. `value=1048000` (parts and their byte sizes). */
  omitted: 'dlq.omitted',
} as const;

/** Why a record became a dead letter: a DecodeError's code, or one of these. */
export const DEAD_LETTER_CODES = {
  /** The domain refused a decoded event (validateEvent). */
  EVENT_INVALID: 'EVENT_INVALID',
  /** The domain (or the aggregate) threw on this input: retrying the same input cannot help. */
  PROCESSING_FAILED: 'PROCESSING_FAILED',
  /** The entity the input would produce is larger than the changelog takes. */
  ENTITY_TOO_LARGE: 'ENTITY_TOO_LARGE',
  /** The broker refused what this input produced (e.g. MESSAGE_TOO_LARGE); found by isolating it. */
  RECORD_REJECTED: 'RECORD_REJECTED',
} as const;

/** Bytes a dead letter may take by default (keys, value, headers): under a 1 MiB topic limit with room for batch overhead. */
export const DEFAULT_DEAD_LETTER_MAX_BYTES = 1_000_000;

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
 * The dead letter for a record that could not be decoded, validated or processed: the original
 * key and value bytes untouched (so it can be replayed once the cause is fixed), the original
 * headers kept, and why and where it failed in `dlq.*` headers (which win over any
 * same-named original header, e.g. from an earlier dead-lettering). A record that would not fit
 * `maxBytes` leaves out its value, then its original headers, then its key (`dlq.omitted` says which).
 */
export function deadLetterRecord(
  source: DeadLetterSource,
  error: { code: string; reason: string },
  now: number,
  maxBytes = DEFAULT_DEAD_LETTER_MAX_BYTES,
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
  return fitted({ key: source.key, value: source.value, headers }, maxBytes);
}

/** Drops the original parts, biggest evidence last, until the record fits `maxBytes`. */
function fitted(record: DeadLetterMessage, maxBytes: number): DeadLetterMessage {
  const omitted: string[] = [];
  const fits = () => sizeOf(record) + (omitted.length ? 64 : 0) <= maxBytes;
  if (!fits() && record.value !== null) {
    omitted.push(`value=${record.value.length}`);
    record = { ...record, value: null };
  }
  if (!fits()) {
    const own = Object.fromEntries(Object.entries(record.headers).filter(([n]) => n.startsWith('dlq.')));
    omitted.push(`headers=${headersSize(record.headers) - headersSize(own)}`);
    record = { ...record, headers: own };
  }
  if (!fits() && record.key !== null) {
    omitted.push(`key=${record.key.length}`);
    record = { ...record, key: null };
  }
  if (omitted.length > 0) record.headers[DEAD_LETTER_HEADERS.omitted] = omitted.join(',');
  return record;
}

function sizeOf(record: DeadLetterMessage): number {
  return (record.key?.length ?? 0) + (record.value?.length ?? 0) + headersSize(record.headers);
}

function headersSize(headers: Record<string, HeaderValue>): number {
  let n = 0;
  for (const [name, v] of Object.entries(headers)) {
    for (const part of Array.isArray(v) ? v : [v]) n += Buffer.byteLength(name) + Buffer.byteLength(part) + 8;
  }
  return n;
}
