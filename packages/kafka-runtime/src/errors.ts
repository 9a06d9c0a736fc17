import { CodedError } from '@state-relay/rules';
import { causes, hasProducerFencedMessage, kafkaErrorType } from './kafkajs/error-shapes';

export const KafkaRuntimeErrorCodes = {
  TOPICS_NOT_CO_PARTITIONED: 'TOPICS_NOT_CO_PARTITIONED',
  TOPIC_CONFIG_CONFLICT: 'TOPIC_CONFIG_CONFLICT',
  RESTORE_FAILED: 'RESTORE_FAILED',
  ADMIN_CALL_TIMEOUT: 'ADMIN_CALL_TIMEOUT',
  TOPICS_NOT_READY: 'TOPICS_NOT_READY',
  PRODUCER_FENCED: 'PRODUCER_FENCED',
  OFFSET_OUT_OF_RANGE: 'OFFSET_OUT_OF_RANGE',
  KAFKAJS_UNSUPPORTED: 'KAFKAJS_UNSUPPORTED',
  KAFKAJS_SHAPE_CHANGED: 'KAFKAJS_SHAPE_CHANGED',
  KAFKAJS_NOT_PATCHED: 'KAFKAJS_NOT_PATCHED',
  BROKER_TOO_OLD: 'BROKER_TOO_OLD',
  CHANGELOG_NOT_SETTLED: 'CHANGELOG_NOT_SETTLED',
} as const;
export type KafkaRuntimeErrorCode = (typeof KafkaRuntimeErrorCodes)[keyof typeof KafkaRuntimeErrorCodes];

/** Base of every error this package throws. */
export class KafkaRuntimeError extends CodedError<KafkaRuntimeErrorCode> {
  override name = 'KafkaRuntimeError';
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

/** The installed kafkajs is not the release the kafkajs adapter (src/kafkajs) is written against. */
export class UnsupportedKafkajsError extends KafkaRuntimeError {
  constructor(
    readonly installed: string,
    readonly supported: string,
  ) {
    super(
      KafkaRuntimeErrorCodes.KAFKAJS_UNSUPPORTED,
      `kafkajs ${installed} is installed, but state-relay supports kafkajs ${supported} only: its kafkajs adapter (@state-relay/kafka-runtime, src/kafkajs) relies on that release's internals`,
    );
    this.name = 'UnsupportedKafkajsError';
  }
}

/** A kafkajs internal the adapter relies on is missing or has another shape; `what` names it. */
export class KafkajsShapeError extends KafkaRuntimeError {
  constructor(
    readonly what: string,
    cause?: unknown,
  ) {
    super(
      KafkaRuntimeErrorCodes.KAFKAJS_SHAPE_CHANGED,
      `kafkajs internals changed: ${what} is not as the adapter expects`,
      {
        cause,
      },
    );
    this.name = 'KafkajsShapeError';
  }
}

/** The installed kafkajs lacks the project's patch (patches/kafkajs@2.2.4.patch): `what` names the missing part. */
export class KafkajsNotPatchedError extends KafkaRuntimeError {
  constructor(readonly what: string) {
    super(
      KafkaRuntimeErrorCodes.KAFKAJS_NOT_PATCHED,
      `kafkajs is installed without state-relay's patch (patches/kafkajs@2.2.4.patch, applied by pnpm install through pnpm.patchedDependencies): ${what} is missing`,
    );
    this.name = 'KafkajsNotPatchedError';
  }
}

/** The broker does not offer an API version a mode needs; the message names the API, both versions and the Kafka release. */
export class BrokerTooOldError extends KafkaRuntimeError {
  constructor(
    readonly api: string,
    readonly needed: number,
    readonly offered: number | undefined,
    purpose: string,
  ) {
    super(
      KafkaRuntimeErrorCodes.BROKER_TOO_OLD,
      `${purpose} needs ${api} version ${needed} or newer (Apache Kafka 2.5+), but the broker offers ${
        offered === undefined ? 'no version of it' : `at most version ${offered}`
      }`,
    );
    this.name = 'BrokerTooOldError';
  }
}

// PRODUCER_FENCED (90) needs the patch's error table; kafkajs's own stops at 88. TRANSACTION_ABORTABLE
// (120) is deliberately absent: the transaction is to be aborted, the producer is not fenced.
const FENCED_TYPES = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED']);

/**
 * True when another producer with our transactional id took over (the task moved): the
 * only correct reaction is to drop the task's uncommitted work, never to retry.
 */
export function isFencedError(err: unknown): boolean {
  for (const e of causes(err, 5)) {
    const type = kafkaErrorType(e);
    if ((type !== undefined && FENCED_TYPES.has(type)) || hasProducerFencedMessage(e)) return true;
  }
  return false;
}

/** TxnOffsetCommit answers that say the member is not (or no longer) in the group's generation (KIP-447). */
const STALE_MEMBER_TYPES = new Set([
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'FENCED_INSTANCE_ID',
  'REBALANCE_IN_PROGRESS',
]);

/**
 * True when a transaction's offsets were refused because the group moved on (exactly-once v2): the
 * transaction is aborted and its tasks recover after the rejoin; the producer itself is fine.
 */
export function isStaleMemberError(err: unknown): boolean {
  for (const e of causes(err, 6)) {
    const type = kafkaErrorType(e);
    if (type !== undefined && STALE_MEMBER_TYPES.has(type)) return true;
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
  for (const e of causes(err, 6)) {
    const type = kafkaErrorType(e);
    if (type !== undefined && RECORD_REJECTED_TYPES.has(type)) return type;
  }
  return undefined;
}
