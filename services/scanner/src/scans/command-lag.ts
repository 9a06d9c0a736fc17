import { withDeadline } from '@state-relay/kafka-runtime';
import type { Admin } from 'kafkajs';

export interface CommandLagProbeOptions {
  admin: Pick<Admin, 'fetchOffsets' | 'fetchTopicOffsets'>;
  /** The processor's consumer group (its APP_ID). */
  groupId: string;
  topic: string;
  /** How long a reading is reused; default 250 ms. */
  cacheMs?: number;
  /**
   * How long a caller waits for a fresh reading; default 5 s. Past it the caller gets an error
   * (the walk goes on without backing off) and the reading, when it comes, is kept for the next.
   */
  waitMs?: number;
  now?: () => number;
}

/** A reading older than this is not served: the caller waits for a fresh one. */
const MAX_STALE_MS = 5_000;

/**
 * How far the processor is behind on the commands topic: the sum over partitions of the end
 * offset minus the group's committed offset (the processor commits them in its transactions).
 * A reading is reused for `cacheMs`; after that the last reading is still served (up to 5 s old)
 * while a fresh one is fetched in the background, so the walk never waits on these round trips.
 */
export class CommandLagProbe {
  private cached?: { at: number; lag: number };
  private inflight?: Promise<number>;

  constructor(private readonly options: CommandLagProbeOptions) {}

  async lag(): Promise<number> {
    const age = this.cached === undefined ? Infinity : this.now() - this.cached.at;
    if (age < (this.options.cacheMs ?? 250)) return this.cached!.lag;
    if (age < MAX_STALE_MS) {
      this.refresh().catch(() => undefined); // a failed refresh leaves the reading to age out
      return this.cached!.lag;
    }
    const waitMs = this.options.waitMs ?? 5_000;
    return withDeadline(this.refresh(), waitMs, { error: () => new Error(`no lag reading within ${waitMs} ms`) });
  }

  private refresh(): Promise<number> {
    this.inflight ??= this.read()
      .then((lag) => {
        this.cached = { at: this.now(), lag };
        return lag;
      })
      .finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private async read(): Promise<number> {
    const { admin, groupId, topic } = this.options;
    const [ends, groups] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      admin.fetchOffsets({ groupId, topics: [topic] }),
    ]);
    const committed = new Map((groups[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
    let lag = 0n;
    for (const { partition, high, low } of ends) {
      const c = committed.get(partition) ?? -1n;
      // No commit yet: the processor will start from the beginning of the partition.
      const from = c < 0n ? BigInt(low) : c;
      if (BigInt(high) > from) lag += BigInt(high) - from;
    }
    return Number(lag);
  }
}
