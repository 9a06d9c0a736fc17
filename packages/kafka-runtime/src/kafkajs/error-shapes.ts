// How kafkajs (2.2.4) shapes the errors it throws: where it puts the broker's error name, how it
// wraps one error in another, and the states it marks by message text only.

/**
 * `err`, then each error it wraps, at most `maxDepth` in all. kafkajs links a wrapper to the error
 * it gave up on with `cause` (KafkaJSNumberOfRetriesExceeded); `originalError` is followed too.
 */
export function* causes(err: unknown, maxDepth: number): Generator<unknown, void, undefined> {
  for (let e = err, depth = 0; e && depth < maxDepth; depth++) {
    yield e;
    e = (e as { cause?: unknown }).cause ?? (e as { originalError?: unknown }).originalError;
  }
}

/** The Kafka protocol error name (NOT_COORDINATOR, …) kafkajs put on a KafkaJSProtocolError as `type`. */
export function kafkaErrorType(err: unknown): string | undefined {
  const type = (err as { type?: unknown } | null | undefined)?.type;
  return typeof type === 'string' ? type : undefined;
}

/** Kafka's error code OFFSET_OUT_OF_RANGE (the protocol's, not kafkajs's text). */
const KAFKA_OFFSET_OUT_OF_RANGE = 1;

/** The partition a kafkajs error (KafkaJSOffsetOutOfRange) reports OFFSET_OUT_OF_RANGE for, or undefined. */
export function offsetOutOfRangePartition(err: unknown): number | undefined {
  const e = err as { code?: unknown; partition?: unknown } | null;
  if (e?.code !== KAFKA_OFFSET_OUT_OF_RANGE) return undefined;
  return typeof e.partition === 'number' ? e.partition : undefined;
}

/**
 * True when one error's message says a producer was fenced or had an old epoch: kafkajs wraps
 * some broker errors without their type, and its INVALID_PRODUCER_EPOCH text says so.
 */
export function hasProducerFencedMessage(err: unknown): boolean {
  const msg = (err as { message?: unknown } | null | undefined)?.message;
  return typeof msg === 'string' && /producer.*(fenced|epoch)/i.test(msg);
}

/** kafkajs's text for a pause, resume or seek on a consumer that is not running. */
export const CONSUMER_NOT_RUNNING_MESSAGE = 'consumer#run must be called first';

/**
 * The error kafkajs throws from pause, resume or seek while a consumer is between runs. kafkajs
 * gives that state no code or flag: the error's name and message text are the only mark.
 */
export function isConsumerNotRunningError(err: unknown): boolean {
  return (
    err instanceof Error &&
    err.name === 'KafkaJSNonRetriableError' &&
    err.message.includes(CONSUMER_NOT_RUNNING_MESSAGE)
  );
}
