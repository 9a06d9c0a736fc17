import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeStoredEntity } from '@state-relay/contracts';
import { endOffsets } from '@state-relay/kafka-runtime';
import { ReplicaStore } from '@state-relay/store';
import { createTopics, kafkaClient, testBrokers, uniqueName, waitUntil } from '@state-relay/testkit';
import type { Admin, Consumer, Kafka, Producer, Transaction } from 'kafkajs';
import pino from 'pino';
import { createScannerMetrics } from '../src/metrics';
import { ReplicaFollower } from '../src/replica/replica-follower';

const silent = pino({ level: 'silent' });

function entities(from: number, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    key: `acct-${String(from + i).padStart(4, '0')}`,
    value: encodeStoredEntity({ version: 1, value: { status: 'active', n: from + i } }),
  }));
}

type EndRead = ReturnType<Admin['fetchTopicOffsets']>;

function totalLag(follower: ReplicaFollower): number {
  return follower.lag().reduce((sum, p) => sum + p.lag, 0);
}

describe('replica follower against a real broker', () => {
  let kafka: Kafka;
  let admin: Admin;
  const cleanups: Array<() => Promise<void> | void> = [];

  // An admin per test: kafkajs keeps every topic an admin was asked about in its metadata requests,
  // and one test's deleted topic would fail the next test's reads (UNKNOWN_TOPIC_OR_PARTITION).
  beforeEach(async () => {
    kafka = kafkaClient(testBrokers());
    admin = kafka.admin();
    await admin.connect();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    await admin.disconnect();
  });

  async function changelog(): Promise<string> {
    const topic = uniqueName('replica-changelog');
    await createTopics(admin, [{ topic, partitions: 1, compacted: true }]);
    cleanups.push(() => admin.deleteTopics({ topics: [topic] }).catch(() => undefined));
    return topic;
  }

  /** EndTxn returns before the markers are written: waits until the last stable offset is `lso`. */
  async function committedThrough(topic: string, lso: bigint): Promise<void> {
    await waitUntil(async () => (await endOffsets(admin, topic)).get(0) === lso, {
      timeoutMs: 30_000,
      message: `the last stable offset of ${topic} at ${lso}`,
    });
  }

  async function transactionalProducer(): Promise<Producer> {
    const producer = kafka.producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    cleanups.push(() => producer.disconnect());
    return producer;
  }

  /**
   * A follower over a fresh replica file. `onConsumer` sees each consumer it creates, after the
   * follower's own listeners; `aroundEndRead` wraps each end-offset read, one read at a time.
   */
  function follower(
    topic: string,
    {
      onConsumer,
      aroundEndRead,
    }: { onConsumer?: (c: Consumer) => void; aroundEndRead?: (read: () => EndRead) => EndRead } = {},
  ) {
    const dir = mkdtempSync(join(tmpdir(), 'replica-follower-'));
    const replica = ReplicaStore.open({ path: join(dir, 'replica.sqlite') });
    const observed: Kafka = Object.create(kafka, {
      consumer: {
        value: (config: Parameters<Kafka['consumer']>[0]) => {
          const consumer = kafka.consumer(config);
          if (onConsumer) queueMicrotask(() => onConsumer(consumer));
          return consumer;
        },
      },
    });
    let reads = Promise.resolve();
    const readEnds = (topic: string) => {
      const read = reads.then(() => {
        const once = () => admin.fetchTopicOffsets(topic);
        return aroundEndRead ? aroundEndRead(once) : once();
      });
      reads = read.then(
        () => undefined,
        () => undefined,
      );
      return read;
    };
    const f = new ReplicaFollower({
      kafka: observed,
      admin: { fetchTopicOffsets: readEnds, describeConfigs: (request) => admin.describeConfigs(request) },
      topic,
      groupId: uniqueName('replica'),
      replica,
      logger: silent,
      metrics: createScannerMetrics(),
      endsRefreshMs: 50,
    });
    cleanups.push(async () => {
      await f.stop();
      replica.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return { follower: f, replica };
  }

  it('a batch made stale mid-batch (a seek) never counts as applied: no lag 0 while SQLite lacks records', async () => {
    const topic = await changelog();
    const producer = await transactionalProducer();
    const tx = await producer.transaction();
    await tx.send({ topic, messages: entities(0, 20) });
    await tx.commit();
    await committedThrough(topic, 21n);

    // While the replica reports lag 0 (an empty list: the end is not known yet) or caught up, the rows SQLite holds right then.
    const rowsWhenCaughtUp: number[] = [];
    let staleBatches = 0;
    const { follower: f, replica } = follower(topic, {
      onConsumer: (consumer) => {
        // The first batch with records is made stale before eachBatch sees it: eachBatch returns
        // early, kafkajs still emits its end-of-batch event.
        consumer.on(consumer.events.START_BATCH_PROCESS, ({ payload }) => {
          if (staleBatches > 0 || payload.topic !== topic || payload.batchSize === 0) return;
          staleBatches++;
          consumer.seek({ topic, partition: payload.partition, offset: '0' });
        });
        consumer.on(consumer.events.END_BATCH_PROCESS, () => {
          if (f.caughtUpOnce || (f.lag().length > 0 && totalLag(f) === 0)) rowsWhenCaughtUp.push(replica.count());
        });
      },
    });
    await f.start();

    await waitUntil(() => f.caughtUpOnce && totalLag(f) === 0, { timeoutMs: 30_000, message: 'replica caught up' });
    expect(staleBatches).toBe(1);
    expect(replica.count()).toBe(20);
    expect(rowsWhenCaughtUp.length).toBeGreaterThan(0);
    expect(rowsWhenCaughtUp).toEqual(rowsWhenCaughtUp.map(() => 20));
    expect(replica.offsets().get(0)).toBe('21'); // 20 records and the commit marker
  });

  it('measures lag against the last stable offset, and refreshes synced_at under steady transactional load', async () => {
    const topic = await changelog();
    const producer = await transactionalProducer();
    const first = await producer.transaction();
    await first.send({ topic, messages: entities(0, 10) });
    await first.commit(); // offsets 0-9, the commit marker at 10: the LSO is 11
    await committedThrough(topic, 11n);
    let open: Transaction | undefined = await producer.transaction();
    await open.send({ topic, messages: entities(10, 5) }); // offsets 11-15, uncommitted: the high watermark is 16

    // Steady load, made deterministic: before every end read, one more transaction commits while
    // the follower's consumer is paused, so no read ever finds the replica at the end it returns.
    let consumer: Consumer | undefined;
    let load = false;
    let loaded = 0;
    const commitOneMore = async (c: Consumer) => {
      c.pause([{ topic }]);
      if (open !== undefined) {
        await open.commit(); // the marker at 16: the LSO is 17
        open = undefined;
      } else {
        const tx = await producer.transaction();
        await tx.send({ topic, messages: entities(100 + loaded, 1) });
        await tx.commit(); // one record and its marker
        loaded++;
      }
      await committedThrough(topic, 17n + 2n * BigInt(loaded));
    };
    const { follower: f, replica } = follower(topic, {
      onConsumer: (c) => (consumer = c),
      aroundEndRead: async (read) => {
        const c = load ? consumer : undefined;
        if (c === undefined) return read();
        // The replica holds the last load's records before the next: it can reach each end read.
        await waitUntil(() => replica.count() === 15 + loaded || (open !== undefined && replica.count() === 10), {
          timeoutMs: 30_000,
          message: 'replica applied the last committed transaction',
        });
        await commitOneMore(c);
        try {
          return await read();
        } finally {
          // Resumed before the follower sees the read, but no fetch can answer within this tick.
          c.resume([{ topic }]);
        }
      },
    });
    cleanups.push(() => void (load = false)); // runs first: no end read commits once the test is over
    await f.start();
    await waitUntil(() => f.caughtUpOnce && replica.syncedAt() !== null, {
      timeoutMs: 30_000,
      message: 'replica caught up with the committed records',
    });
    expect((await f.currentEnds()).get(0)).toBe(11n);
    expect(totalLag(f)).toBe(0);
    expect(replica.count()).toBe(10);

    load = true;
    await f.currentEnds(); // every earlier read is done: each read from here on comes after a commit
    expect(open).toBeUndefined();
    const syncedBefore = replica.syncedAt()!;
    await waitUntil(() => (replica.syncedAt() ?? 0) > syncedBefore && loaded >= 3, {
      timeoutMs: 30_000,
      message: 'synced_at refreshed while transactions keep committing',
    });
    load = false;
    await waitUntil(
      async () => totalLag(f) === 0 && (await f.currentEnds()).get(0) === BigInt(replica.offsets().get(0) ?? -1),
      {
        timeoutMs: 30_000,
        message: 'replica at the end once the load stops',
      },
    );
    expect(replica.count()).toBe(15 + loaded);
  });
});
