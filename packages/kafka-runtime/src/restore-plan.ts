import type { Kafka } from 'kafkajs';
import { KafkaRuntimeError, KafkaRuntimeErrorCodes, OffsetOutOfRangeError } from './errors';

/** What a restore plan needs from the request (see RestoreRequest). */
export interface RestorePlanRequest<R> {
  kafka: Kafka;
  topic: string;
  apply: (partition: number, records: R[], nextOffset: bigint) => void | Promise<void>;
  wanted?: (partition: number) => boolean;
  onOffsetOutOfRange?: (partition: number, at: bigint, logStart: bigint) => void | Promise<void>;
}

/**
 * The partitions of one restore and where each stands. A partition leaves the restore on its
 * own — its task no longer wanted, or its apply failed — and the others go on: one task's
 * store must not throw away the restore of the rest.
 */
export class RestorePlan<R> {
  readonly position: Map<number, bigint>;
  readonly target: Map<number, bigint>;
  /** Partitions dropped because their apply (or their out-of-range handling) failed. */
  readonly failed = new Map<number, KafkaRuntimeError>();

  constructor(
    private readonly req: RestorePlanRequest<R>,
    start: Map<number, bigint>,
    target: Map<number, bigint>,
  ) {
    this.position = new Map(start);
    this.target = new Map(target);
  }

  /** Still part of the restore: not failed, and still wanted by the caller. */
  isLive(partition: number): boolean {
    return this.target.has(partition) && !this.failed.has(partition) && (this.req.wanted?.(partition) ?? true);
  }

  /** Live partitions below their target, at their next offset. */
  pending(): Map<number, bigint> {
    return new Map([...this.position].filter(([p, at]) => at < this.target.get(p)! && this.isLive(p)));
  }

  /** Applies a batch of a live partition; a failure drops that partition only. Returns the records applied. */
  async apply(partition: number, records: R[], next: bigint): Promise<number> {
    if (!this.isLive(partition)) return 0;
    try {
      await this.req.apply(partition, records, next);
    } catch (err) {
      this.failed.set(
        partition,
        err instanceof KafkaRuntimeError
          ? err
          : new KafkaRuntimeError(
              KafkaRuntimeErrorCodes.RESTORE_FAILED,
              `applying ${this.req.topic} partition ${partition} records failed`,
              { cause: err },
            ),
      );
      return 0;
    }
    if (next > (this.position.get(partition) ?? 0n)) this.position.set(partition, next);
    return records.length;
  }

  /**
   * Moves every live partition whose position the log no longer holds (below its start, or past
   * its end) to the log start, after the caller's onOffsetOutOfRange (which must discard what a
   * gap may have made wrong). Without that callback the partition fails with the typed error.
   * Returns how many partitions moved.
   */
  async restartOutOfRange(cause?: OffsetOutOfRangeError): Promise<number> {
    const offsets = await logOffsets(this.req.kafka, this.req.topic);
    let moved = 0;
    for (const [partition, at] of this.pending()) {
      const range = offsets.get(partition);
      if (!range || (at >= range.low && at <= range.high)) continue;
      moved++;
      const handler = this.req.onOffsetOutOfRange;
      try {
        if (!handler) throw cause ?? new OffsetOutOfRangeError(this.req.topic, partition, at);
        await handler(partition, at, range.low);
      } catch (err) {
        this.failed.set(
          partition,
          err instanceof KafkaRuntimeError ? err : new OffsetOutOfRangeError(this.req.topic, partition, at, err),
        );
        continue;
      }
      this.position.set(partition, range.low);
      if (range.high < this.target.get(partition)!) this.target.set(partition, range.high);
    }
    return moved;
  }
}

/** Log start (low) and end (high) per partition. */
async function logOffsets(kafka: Kafka, topic: string): Promise<Map<number, { low: bigint; high: bigint }>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, { low: BigInt(o.low), high: BigInt(o.high) }]));
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
