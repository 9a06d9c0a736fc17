import { withDeadline } from '@state-relay/kafka-runtime';
import type { Admin } from 'kafkajs';

export interface InputLag {
  topic: string;
  partition: number;
  /** End offset minus the group's committed offset (the log start when none is committed). */
  lag: number;
}

export interface InputLagProbeOptions {
  admin: Pick<Admin, 'fetchOffsets' | 'fetchTopicOffsets'>;
  groupId: string;
  topics: readonly string[];
  /** How long a reading is reused; default 1 s (the scanner polls once a second). */
  cacheMs?: number;
  /** How long a caller waits for a reading before it gets null; default 2 s. */
  waitMs?: number;
  now?: () => number;
}

/**
 * The group's lag on each partition of both inputs, for GET /status: end offsets minus committed
 * offsets (the processor commits them in its transactions, every commit interval). One reading
 * serves every caller for `cacheMs`; Kafka not answering within `waitMs` gives null, never an error.
 */
export class InputLagProbe {
  private cached?: { at: number; lags: InputLag[] };
  private inflight?: Promise<InputLag[]>;

  constructor(private readonly options: InputLagProbeOptions) {}

  async read(): Promise<InputLag[] | null> {
    const now = (this.options.now ?? Date.now)();
    if (this.cached && now - this.cached.at < (this.options.cacheMs ?? 1_000)) return this.cached.lags;
    this.inflight ??= this.fetch()
      .then((lags) => {
        this.cached = { at: (this.options.now ?? Date.now)(), lags };
        return lags;
      })
      .finally(() => (this.inflight = undefined));
    try {
      return await withDeadline(this.inflight, this.options.waitMs ?? 2_000, { fallback: null });
    } catch {
      return null; // the admin client failed (and is replaced): unknown this time
    }
  }

  private async fetch(): Promise<InputLag[]> {
    const { admin, groupId, topics } = this.options;
    const [committed, ends] = await Promise.all([
      admin.fetchOffsets({ groupId, topics: [...topics] }),
      Promise.all(topics.map((topic) => admin.fetchTopicOffsets(topic))),
    ]);
    const lags: InputLag[] = [];
    topics.forEach((topic, i) => {
      const group = committed.find((c) => c.topic === topic)?.partitions ?? [];
      for (const { partition, high, low } of ends[i]!) {
        const c = BigInt(group.find((p) => p.partition === partition)?.offset ?? '-1');
        const from = c < 0n ? BigInt(low) : c;
        lags.push({ topic, partition, lag: Number(BigInt(high) > from ? BigInt(high) - from : 0n) });
      }
    });
    return lags.sort((a, b) => a.partition - b.partition || topics.indexOf(a.topic) - topics.indexOf(b.topic));
  }
}
