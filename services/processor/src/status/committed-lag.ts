import type { Gauge } from 'prom-client';
import type { InputLag } from './input-lag';

/** Where processor_committed_lag_records is read from at scrape time. */
export interface CommittedLagSource {
  /** The group's lag on every input partition (InputLagProbe.read); null when Kafka did not answer in time. */
  read: () => Promise<InputLag[] | null>;
  /** The partitions (tasks) this instance owns now. */
  owned: () => readonly number[];
}

/**
 * Sets the gauge, at scrape time, to the committed lag of the partitions this instance owns, and
 * to nothing else: a partition no longer owned leaves no series behind. When Kafka does not answer
 * (null) or there is no source (not started, stopped), the series are dropped rather than kept:
 * an old value would read as a lag that holds steady, which is exactly what the alert cannot tell
 * from a stuck consumer. Never throws, so the scrape never fails for it.
 */
export async function collectCommittedLag(
  gauge: Gauge<'topic' | 'partition'>,
  source: CommittedLagSource | undefined,
): Promise<void> {
  const lags = source ? await source.read().catch(() => null) : null;
  gauge.reset();
  if (!source || !lags) return;
  const owned = new Set(source.owned()); // read after the wait: the assignment of this moment
  for (const { topic, partition, lag } of lags)
    if (owned.has(partition)) gauge.set({ topic, partition: String(partition) }, lag);
}
