import { randomBytes } from 'node:crypto';
import type { Admin, Consumer, Kafka } from '../lib';

/**
 * The latest record of every key of a changelog, as a read_committed consumer sees it: what a
 * restore would end with. Follows the topic until stop().
 */
export class ChangelogTail {
  readonly latest = new Map<string, { key: Buffer; value: Buffer | null }>();
  private readonly position = new Map<number, bigint>();
  private readonly groupId = `bench-tail-${randomBytes(4).toString('hex')}`;
  private consumer?: Consumer;

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
  ) {}

  async start(): Promise<void> {
    const consumer = this.kafka.consumer({ groupId: this.groupId, readUncommitted: false, maxWaitTimeInMs: 50 });
    this.consumer = consumer;
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) =>
      this.advance(payload.partition, BigInt(payload.lastOffset) + 1n),
    );
    await consumer.connect();
    await consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages)
          if (m.key) this.latest.set(m.key.toString('utf8'), { key: m.key, value: m.value });
        this.advance(batch.partition, BigInt(batch.lastOffset()) + 1n);
      },
    });
  }

  /** Until every partition has been read to its current end offset. */
  async caughtUp(admin: Admin, timeoutMs = 120_000): Promise<void> {
    const ends = (await admin.fetchTopicOffsets(this.topic)).map((o) => [o.partition, BigInt(o.high)] as const);
    const deadline = Date.now() + timeoutMs;
    while (!ends.every(([p, end]) => (this.position.get(p) ?? 0n) >= end)) {
      if (Date.now() > deadline) throw new Error(`changelog tail of ${this.topic} not at its end in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async stop(admin: Admin): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
    await admin.deleteGroups([this.groupId]).catch(() => undefined);
  }

  private advance(partition: number, next: bigint): void {
    if (next > (this.position.get(partition) ?? 0n)) this.position.set(partition, next);
  }
}
