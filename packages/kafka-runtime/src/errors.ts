export const KafkaRuntimeErrorCodes = {
  TOPICS_NOT_CO_PARTITIONED: 'TOPICS_NOT_CO_PARTITIONED',
  TOPIC_CONFIG_CONFLICT: 'TOPIC_CONFIG_CONFLICT',
  RESTORE_FAILED: 'RESTORE_FAILED',
  TOPICS_NOT_READY: 'TOPICS_NOT_READY',
  PRODUCER_FENCED: 'PRODUCER_FENCED',
  OFFSET_OUT_OF_RANGE: 'OFFSET_OUT_OF_RANGE',
} as const;
export type KafkaRuntimeErrorCode = (typeof KafkaRuntimeErrorCodes)[keyof typeof KafkaRuntimeErrorCodes];

export class KafkaRuntimeError extends Error {
  readonly code: KafkaRuntimeErrorCode;
  readonly retriable: boolean;
  constructor(code: KafkaRuntimeErrorCode, message: string, options: { cause?: unknown; retriable?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.name = 'KafkaRuntimeError';
    this.code = code;
    this.retriable = options.retriable ?? false;
  }
}

/** The two inputs of a task must have the same partition count; refusing to start is the only safe answer. */
export class NotCoPartitionedError extends KafkaRuntimeError {
  constructor(readonly counts: Record<string, number>) {
    super(
      KafkaRuntimeErrorCodes.TOPICS_NOT_CO_PARTITIONED,
      `input topics must be co-partitioned (same partition count), but ${Object.entries(counts)
        .map(([t, n]) => `${t} has ${n}`)
        .join(' and ')}`,
    );
  }
}

/** Kafka's error code OFFSET_OUT_OF_RANGE (the protocol's, not kafkajs's text). */
const KAFKA_OFFSET_OUT_OF_RANGE = 1;

/**
 * A fetch asked for an offset the partition no longer holds: its log start moved past it
 * (DeleteRecords, retention) or its end is below it. Not retriable at the same offset.
 */
export class OffsetOutOfRangeError extends KafkaRuntimeError {
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly offset: bigint,
    cause?: unknown,
  ) {
    super(KafkaRuntimeErrorCodes.OFFSET_OUT_OF_RANGE, `${topic} partition ${partition} has no offset ${offset}`, {
      cause,
    });
    this.name = 'OffsetOutOfRangeError';
  }
}

/** The partition a kafkajs error reports OFFSET_OUT_OF_RANGE for (decided by Kafka's code), or undefined. */
export function offsetOutOfRangePartition(err: unknown): number | undefined {
  const e = err as { code?: unknown; partition?: unknown } | null;
  if (e?.code !== KAFKA_OFFSET_OUT_OF_RANGE) return undefined;
  return typeof e.partition === 'number' ? e.partition : undefined;
}

const FENCED_TYPES = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED']);

/**
 * True when another producer with our transactional id took over (the task moved): the
 * only correct reaction is to drop the task's uncommitted work, never to retry.
 */
export function isFencedError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && FENCED_TYPES.has(type)) return true;
    const msg = (e as { message?: unknown }).message;
    // kafkajs wraps some broker errors without their type; its fencing text is stable.
    if (typeof msg === 'string' && /producer.*(fenced|epoch)/i.test(msg)) return true;
    e = (e as { cause?: unknown }).cause ?? (e as { originalError?: unknown }).originalError;
  }
  return false;
}

/**
 * Broker answers that refuse a produced record or batch for what it is (too large, failing
 * validation, failing its CRC): sending the same records again fails the same way, so the input
 * that produced them must be isolated. Decided by the Kafka error code, never by message text.
 */
export const RECORD_REJECTED_TYPES: ReadonlySet<string> = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'CORRUPT_MESSAGE',
]);

/** The Kafka error type that refused a record, found along kafkajs's wrapping (`cause`), or undefined. */
export function recordRejection(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 6; depth++) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && RECORD_REJECTED_TYPES.has(type)) return type;
    e = (e as { cause?: unknown }).cause ?? (e as { originalError?: unknown }).originalError;
  }
  return undefined;
}
