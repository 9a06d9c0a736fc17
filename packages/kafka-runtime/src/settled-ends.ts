import type { Kafka } from 'kafkajs';
import { KafkaRuntimeError, KafkaRuntimeErrorCodes } from './errors';
import { openTopicFetcher } from './kafkajs';

export interface SettledEndsOptions {
  /** Where each partition's read_committed end (LSO) stands now: a valid offset to fetch from. */
  ends: ReadonlyMap<number, bigint>;
  /** Give up (TRANSACTION_TIMEOUT_MS and the markers' time: an open transaction ends by then). */
  withinMs: number;
  intervalMs?: number;
}

/**
 * The read_committed end of each partition once every transaction that had written to it when
 * this was called has ended: the last stable offset (LSO) has reached the high watermark seen at
 * the first look. A transaction's EndTxn is answered before its markers are written, and the
 * marker for __consumer_offsets (what a require_stable offset read waits for) can land before the
 * one for this topic's partition: an end read in between is short of records whose input offsets
 * are already committed. Reads HW and LSO from a Fetch at the LSO (kafkajs's admin ListOffsets
 * knows no read_uncommitted). KafkaRuntimeError CHANGELOG_NOT_SETTLED after `withinMs`.
 */
export async function settledEnds(
  kafka: Kafka,
  topic: string,
  partitions: readonly number[],
  { ends, withinMs, intervalMs = 50 }: SettledEndsOptions,
): Promise<Map<number, bigint>> {
  if (partitions.length === 0) return new Map();
  const fetcher = await openTopicFetcher(kafka, topic);
  try {
    const deadline = Date.now() + withinMs;
    const at = new Map(partitions.map((p) => [p, ends.get(p) ?? 0n]));
    const target = new Map<number, bigint>();
    let lastError: unknown;
    const unsettled = () => partitions.filter((p) => !(target.has(p) && at.get(p)! >= target.get(p)!));
    for (;;) {
      try {
        for (const [nodeId, led] of Object.entries(fetcher.leaders(unsettled()))) {
          const batches = await fetcher.fetch(nodeId, {
            maxWaitTime: 0,
            maxBytes: 1,
            partitions: led.map((partition) => ({ partition, fetchOffset: String(at.get(partition)!), maxBytes: 1 })),
          });
          for (const b of batches) {
            const hw = BigInt(b.highWatermark);
            const lso =
              b.lastStableOffset !== undefined && b.lastStableOffset !== '-1' ? BigInt(b.lastStableOffset) : hw;
            if (!target.has(b.partition)) target.set(b.partition, hw);
            if (lso > at.get(b.partition)!) at.set(b.partition, lso);
          }
        }
      } catch (err) {
        lastError = err; // a leader moved, a connection dropped: look again until the deadline
        await fetcher.refreshMetadata().catch(() => undefined);
      }
      const still = unsettled();
      if (still.length === 0) return at;
      if (Date.now() >= deadline) {
        throw new KafkaRuntimeError(
          KafkaRuntimeErrorCodes.CHANGELOG_NOT_SETTLED,
          `${topic}: a transaction still holds partition(s) ${still.join(', ')} after ${withinMs} ms ` +
            `(last stable offset ${still.map((p) => `${p}: ${at.get(p)} of ${target.get(p) ?? '?'}`).join(', ')})`,
          { cause: lastError },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  } finally {
    await fetcher.close();
  }
}
