import { Kafka } from 'kafkajs';
import { createTopics, kafkaClient, readTopic, testBrokers, uniqueName, waitUntil } from '@state-relay/testkit';
import {
  assertCoPartitioned,
  CoPartitionedAssigner,
  endOffsets,
  initTaskProducer,
  ensureTopics,
  NotCoPartitionedError,
  OffsetOutOfRangeError,
  PartitionReader,
  restoreChangelog,
  tasksOf,
} from '../src';

describe('kafka-runtime against a real broker', () => {
  let kafka: Kafka;
  beforeAll(() => {
    kafka = kafkaClient(testBrokers());
  });

  it('refuses inputs with different partition counts, naming both counts', async () => {
    const events = uniqueName('events');
    const commands = uniqueName('commands');
    const admin = kafka.admin();
    await admin.connect();
    try {
      await ensureTopics(admin, [
        { topic: events, partitions: 4 },
        { topic: commands, partitions: 2 },
      ]);
      const err = await assertCoPartitioned(admin, [events, commands]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NotCoPartitionedError);
      expect((err as Error).message).toContain(`${events} has 4`);
      expect((err as Error).message).toContain(`${commands} has 2`);
      // ensureTopics leaves existing topics alone and reports nothing created.
      expect(await ensureTopics(admin, [{ topic: events, partitions: 8 }])).toEqual([]);
    } finally {
      await admin.disconnect();
    }
  });

  it.each([
    ['fetching from the leaders (no group)', true],
    ['through a consumer group', false],
  ])(
    'restores committed changelog records (with their headers) from a checkpoint to the end, skipping aborted ones, %s',
    async (_how, withoutGroup) => {
      const changelog = uniqueName('changelog');
      const admin = kafka.admin();
      await admin.connect();
      await createTopics(admin, [{ topic: changelog, partitions: 2, compacted: true }]);
      await admin.disconnect();
      const producer = await initTaskProducer({ kafka, appId: uniqueName('app'), task: 0 });
      const write = async (values: string[], outcome: 'commit' | 'abort') => {
        const tx = await producer.transaction();
        await tx.send({
          topic: changelog,
          messages: values.map((v) => ({ key: v, value: v, partition: 0, headers: { 'sr-inputs': `in=${v}` } })),
        });
        await (outcome === 'commit' ? tx.commit() : tx.abort());
      };
      await write(['a', 'b'], 'commit'); // offsets 0,1 + marker 2
      await write(['lost'], 'abort'); // 3 + marker 4
      await write(['c'], 'commit'); // 5 + marker 6
      await producer.disconnect();

      const seen: string[] = [];
      const headers: string[] = [];
      const resume: Array<[number, bigint]> = [];
      const summary = await restoreChangelog({
        kafka,
        topic: changelog,
        from: new Map([
          [0, 1n],
          [1, null],
        ]),
        apply: (partition, records, next) => {
          seen.push(...records.map((r) => String(r.value)));
          headers.push(...records.map((r) => String(r.headers['sr-inputs'])));
          resume.push([partition, next]);
        },
        withoutGroup,
      });

      expect(seen).toEqual(['b', 'c']);
      expect(headers).toEqual(['in=b', 'in=c']);
      expect(summary.records).toBe(2);
      // Partition 1 is empty: nothing to restore there.
      expect(summary.partitions).toBe(1);
      expect(resume.at(-1)?.[1]).toBeGreaterThanOrEqual(6n);
    },
  );

  it('restores every record of every partition when fetch responses reach their byte limit', async () => {
    const changelog = uniqueName('changelog');
    const admin = kafka.admin();
    await admin.connect();
    await createTopics(admin, [{ topic: changelog, partitions: 3, compacted: true }]);
    await admin.disconnect();
    const producer = await initTaskProducer({ kafka, appId: uniqueName('app'), task: 0 });
    for (let round = 0; round < 4; round++) {
      const tx = await producer.transaction();
      for (const partition of [0, 1, 2]) {
        await tx.send({
          topic: changelog,
          messages: Array.from({ length: 75 }, (_, i) => ({
            key: `k-${partition}-${round * 75 + i}`,
            value: 'x'.repeat(40),
            partition,
          })),
        });
      }
      await tx.commit();
    }
    await producer.disconnect();

    const seen = new Map<number, string[]>([0, 1, 2].map((p) => [p, []]));
    // A few KiB per response: most responses fill up and leave later partitions empty.
    const summary = await restoreChangelog({
      kafka,
      topic: changelog,
      from: new Map([0, 1, 2].map((p) => [p, null])),
      apply: (partition, records) => void seen.get(partition)!.push(...records.map((r) => String(r.key))),
      fetchBytes: { perPartition: 2_048, perFetch: 3_072 },
    });

    expect(summary.records).toBe(900);
    for (const partition of [0, 1, 2]) {
      expect(seen.get(partition)).toEqual(Array.from({ length: 300 }, (_, i) => `k-${partition}-${i}`));
    }
  });

  /** A changelog of `partitions` partitions with `perPartition` records each (`k-<p>-<i>`), in several batches. */
  async function changelogWith(partitions: number, perPartition: number, cleanupPolicy = 'compact'): Promise<string> {
    const topic = uniqueName('changelog');
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: [
          { topic, numPartitions: partitions, configEntries: [{ name: 'cleanup.policy', value: cleanupPolicy }] },
        ],
      });
      await waitUntil(
        () =>
          admin.fetchTopicOffsets(topic).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 30_000 },
      );
    } finally {
      await admin.disconnect();
    }
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (let from = 0; from < perPartition; from += 10) {
      await producer.send({
        topic,
        messages: Array.from({ length: partitions }, (_, p) =>
          Array.from({ length: Math.min(10, perPartition - from) }, (_, i) => ({
            key: `k-${p}-${from + i}`,
            value: 'x'.repeat(40),
            partition: p,
          })),
        ).flat(),
      });
    }
    await producer.disconnect();
    return topic;
  }

  it('an apply that fails for one partition drops that partition only; one no longer wanted is not applied', async () => {
    const changelog = await changelogWith(3, 60);
    const seen = new Map<number, string[]>([0, 1, 2].map((p) => [p, []]));
    const summary = await restoreChangelog({
      kafka,
      topic: changelog,
      from: new Map([0, 1, 2].map((p) => [p, null])),
      apply: (partition, records) => {
        if (partition === 1) throw new Error('disk I/O error (injected)');
        seen.get(partition)!.push(...records.map((r) => String(r.key)));
      },
      wanted: (partition) => partition !== 2 || seen.get(2)!.length === 0,
      fetchBytes: { perPartition: 1_024, perFetch: 2_048 },
    });
    expect([...summary.failed.keys()]).toEqual([1]);
    expect(summary.failed.get(1)?.code).toBe('RESTORE_FAILED');
    expect(seen.get(0)).toEqual(Array.from({ length: 60 }, (_, i) => `k-0-${i}`));
    expect(seen.get(2)!.length).toBeGreaterThan(0);
    expect(seen.get(2)!.length).toBeLessThan(60); // left the restore after its first batch
  });

  it('a partition whose log start moved past its offset fails with a typed error, and restore restarts it there', async () => {
    const changelog = await changelogWith(2, 50, 'compact,delete');
    const admin = kafka.admin();
    await admin.connect();
    // kafkajs's deleteTopicRecords finds leaders in metadata it does not load itself.
    await admin.fetchTopicMetadata({ topics: [changelog] });
    await admin.deleteTopicRecords({ topic: changelog, partitions: [{ partition: 0, offset: '30' }] });
    await admin.disconnect();

    const reader = (await PartitionReader.open(kafka, changelog, { maxBytesPerPartition: 4_096, maxBytes: 8_192 }))!;
    const err = await reader.fetch(new Map([[0, 10n]])).catch((e: unknown) => e);
    await reader.close();
    expect(err).toBeInstanceOf(OffsetOutOfRangeError);
    expect(err).toMatchObject({ code: 'OFFSET_OUT_OF_RANGE', partition: 0, offset: 10n });

    const seen = new Map<number, string[]>([0, 1].map((p) => [p, []]));
    const moved: Array<[number, bigint, bigint]> = [];
    const summary = await restoreChangelog({
      kafka,
      topic: changelog,
      from: new Map([
        [0, 10n],
        [1, 5n],
      ]),
      apply: (partition, records) => void seen.get(partition)!.push(...records.map((r) => String(r.key))),
      onOffsetOutOfRange: (partition, at, logStart) => void moved.push([partition, at, logStart]),
    });
    expect(moved).toEqual([[0, 10n, 30n]]);
    expect(summary.failed.size).toBe(0);
    expect(seen.get(0)).toEqual(Array.from({ length: 20 }, (_, i) => `k-0-${30 + i}`));
    expect(seen.get(1)).toEqual(Array.from({ length: 45 }, (_, i) => `k-1-${5 + i}`));

    // Without the callback the partition fails with the typed error; the other is restored.
    const without = await restoreChangelog({
      kafka,
      topic: changelog,
      from: new Map([
        [0, 10n],
        [1, null],
      ]),
      apply: () => undefined,
    });
    expect(without.failed.get(0)).toBeInstanceOf(OffsetOutOfRangeError);
    expect(without.records).toBe(50);
  });

  it('gives partition p of every input topic to the same member', async () => {
    const a = uniqueName('a');
    const b = uniqueName('b');
    const groupId = uniqueName('group');
    const admin = kafka.admin();
    await admin.connect();
    await createTopics(admin, [
      { topic: a, partitions: 4 },
      { topic: b, partitions: 4 },
    ]);
    await admin.disconnect();
    const assignments: Array<Record<string, number[]>> = [{}, {}];
    const consumers = [0, 1].map((i) => {
      const c = kafka.consumer({ groupId, partitionAssigners: [CoPartitionedAssigner] });
      c.on(c.events.GROUP_JOIN, ({ payload }) => {
        assignments[i] = payload.memberAssignment;
      });
      return c;
    });
    try {
      for (const c of consumers) {
        await c.connect();
        await c.subscribe({ topics: [a, b] });
        await c.run({ eachBatch: async () => undefined });
      }
      await waitUntil(() => assignments.every((x) => tasksOf(x).length === 2), {
        message: 'both members to own two tasks',
      });
      for (const x of assignments) expect(x[a]).toEqual(x[b]);
      expect([...tasksOf(assignments[0]!), ...tasksOf(assignments[1]!)].sort()).toEqual([0, 1, 2, 3]);
    } finally {
      for (const c of consumers) await c.disconnect();
    }
  });

  it('initialising a task producer fences the earlier owner and completes its open transaction', async () => {
    const topic = uniqueName('fenced');
    const appId = uniqueName('app');
    const admin = kafka.admin();
    await admin.connect();
    await createTopics(admin, [{ topic, partitions: 1 }]);
    await admin.disconnect();

    const zombie = await initTaskProducer({ kafka, appId, task: 3 });
    const open = await zombie.transaction();
    await open.send({ topic, messages: [{ key: 'k', value: 'from the zombie' }] });

    // The new owner: when this resolves, the zombie's transaction is aborted and its epoch is stale.
    const owner = await initTaskProducer({ kafka, appId, task: 3 });
    const late = await open.commit().then(
      () => 'committed',
      (err: { type?: string; name?: string }) => err.type ?? err.name,
    );
    expect(late).not.toBe('committed');

    const tx = await owner.transaction();
    await tx.send({ topic, messages: [{ key: 'k', value: 'from the owner' }] });
    await tx.commit();
    await owner.disconnect();
    await zombie.disconnect().catch(() => undefined);

    const records = await readTopic(kafka, topic, { isolation: 'read_committed' });
    expect(records.map((r) => r.value)).toEqual(['from the owner']);
  });

  it('endOffsets is the last stable offset: an open transaction’s records are not in it', async () => {
    const topic = uniqueName('lso');
    const admin = kafka.admin();
    await admin.connect();
    const producer = kafka.producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      await createTopics(admin, [{ topic, partitions: 1 }]);
      const committed = await producer.transaction();
      await committed.send({ topic, messages: [{ value: 'a' }, { value: 'b' }] });
      await committed.commit(); // offsets 0-1, the commit marker at 2
      const open = await producer.transaction();
      await open.send({ topic, messages: [{ value: 'c' }, { value: 'd' }, { value: 'e' }] }); // 3-5: high watermark 6
      // EndTxn returns before the markers are written, so the LSO gets there a moment later.
      const lsoIs = (end: bigint) =>
        waitUntil(async () => (await endOffsets(admin, topic)).get(0) === end, {
          timeoutMs: 30_000,
          message: `the last stable offset at ${end}`,
        });
      await lsoIs(3n);
      await open.commit(); // the marker at 6
      await lsoIs(7n);
    } finally {
      await producer.disconnect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    }
  });

  it('a task producer looks its coordinators up once, not before every transactional request', async () => {
    const topic = uniqueName('coordinators');
    const groupId = uniqueName('group');
    const admin = kafka.admin();
    await admin.connect();
    await createTopics(admin, [{ topic, partitions: 1 }]);
    await admin.disconnect();
    const count = (producer: Awaited<ReturnType<typeof initTaskProducer>>) => {
      const seen = new Map<string, number>();
      producer.on(producer.events.REQUEST, ({ payload }) =>
        seen.set(payload.apiName, (seen.get(payload.apiName) ?? 0) + 1),
      );
      return seen;
    };
    const run = async (producer: Awaited<ReturnType<typeof initTaskProducer>>) => {
      for (let i = 0; i < 5; i++) {
        const tx = await producer.transaction();
        await tx.send({ topic, messages: [{ key: 'k', value: String(i) }] });
        await tx.sendOffsets({
          consumerGroupId: groupId,
          topics: [{ topic, partitions: [{ partition: 0, offset: String(i + 1) }] }],
        });
        await tx.commit();
      }
    };
    // On a fresh broker the offsets topic is still loading: TxnOffsetCommit answers NOT_COORDINATOR
    // for a while, whatever the client. Warm it up first, outside what is counted.
    const warm = await initTaskProducer({ kafka, appId: uniqueName('warm'), task: 0 });
    await waitUntil(
      async () => {
        const tx = await warm.transaction();
        try {
          await tx.sendOffsets({
            consumerGroupId: groupId,
            topics: [{ topic, partitions: [{ partition: 0, offset: '0' }] }],
          });
          await tx.commit();
          return true;
        } catch {
          await tx.abort().catch(() => undefined);
          return false;
        }
      },
      { timeoutMs: 60_000, intervalMs: 500, message: 'the group coordinator to accept offsets' },
    );
    await warm.disconnect();
    const cached = await initTaskProducer({ kafka, appId: uniqueName('app'), task: 0 });
    const requests = count(cached);
    await run(cached);
    await cached.disconnect();
    // Five transactions of four requests each, and at most one lookup per coordinator.
    expect(requests.get('EndTxn')).toBe(5);
    expect(requests.get('AddOffsetsToTxn')).toBe(5);
    expect(requests.get('GroupCoordinator') ?? 0).toBeLessThanOrEqual(2);

    // The same work on a plain kafkajs transactional producer asks before every request.
    const plain = kafka.producer({ transactionalId: uniqueName('plain'), idempotent: true, maxInFlightRequests: 1 });
    await plain.connect();
    const plainRequests = count(plain);
    await run(plain);
    await plain.disconnect();
    expect(plainRequests.get('GroupCoordinator')).toBeGreaterThanOrEqual(20);
    const records = await readTopic(kafka, topic, { isolation: 'read_committed' });
    expect(records).toHaveLength(10);
  });
});
