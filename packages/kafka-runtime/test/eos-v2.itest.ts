import type { Admin, Consumer, Kafka, Producer } from 'kafkajs';
import { createTopics, kafkaClient, testBrokers, uniqueName, waitUntil } from '@state-relay/testkit';
import { assertEosV2Support, committedOffsets } from '../src';
import { groupCoordinatorVersions } from '../src/kafkajs';

// The requests of the kafkajs patch against the real broker: TxnOffsetCommit v3 fenced by the
// group generation and member id, OffsetFetch v7 with require_stable (KIP-447).

interface Membership {
  generationId: number;
  memberId: string;
}

describe('exactly-once v2 requests against a real broker', () => {
  let kafka: Kafka;
  let admin: Admin;
  let consumer: Consumer;
  let producer: Producer;
  let topic: string;
  let groupId: string;
  let joined: Membership;

  beforeAll(async () => {
    kafka = kafkaClient(testBrokers());
    admin = kafka.admin();
    await admin.connect();
    topic = uniqueName('eos-v2-in');
    groupId = uniqueName('eos-v2-group');
    await createTopics(admin, [{ topic, partitions: 2 }]);
    consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
    let latest: Membership | undefined;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      latest = { generationId: payload.generationId, memberId: payload.memberId };
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic] });
    await consumer.run({ autoCommit: false, eachMessage: async () => undefined });
    await waitUntil(() => latest !== undefined, { timeoutMs: 60_000, message: 'the consumer joined' });
    joined = latest!;
    producer = kafka.producer({
      transactionalId: uniqueName('eos-v2-tx'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
  }, 120_000);

  afterAll(async () => {
    await producer?.disconnect();
    await consumer?.disconnect();
    await admin?.disconnect();
  });

  const commitOffset = async (
    offset: string,
    membership: Partial<Membership>,
    outcome: 'commit' | 'abort' = 'commit',
  ) => {
    const tx = await producer.transaction();
    try {
      await tx.sendOffsets({
        consumerGroupId: groupId,
        topics: [{ topic, partitions: [{ partition: 0, offset }] }],
        ...membership,
      });
    } catch (err) {
      await tx.abort();
      throw err;
    }
    await (outcome === 'commit' ? tx.commit() : tx.abort());
  };
  const committed = async (requireStable = false) =>
    (await admin.fetchOffsets({ groupId, topics: [topic], requireStable }))[0]!.partitions.find(
      (p) => p.partition === 0,
    )!.offset;

  it('finds the broker speaking KIP-447 and reports the generation with the join', async () => {
    await expect(assertEosV2Support(kafka, groupId, 'EXACTLY_ONCE=v2')).resolves.toBeUndefined();
    const versions = await groupCoordinatorVersions(kafka, groupId);
    expect(versions[28]!.maxVersion).toBeGreaterThanOrEqual(3);
    expect(versions[9]!.maxVersion).toBeGreaterThanOrEqual(7);
    expect(joined.generationId).toBeGreaterThanOrEqual(1);
    expect(joined.memberId).toMatch(/.+/);
  });

  /** The committed offset once no transaction holds it (require_stable answers when the markers are written). */
  const stableOffset = async () =>
    (await committedOffsets(admin, groupId, [topic], { requireStable: true, unstableWithinMs: 60_000 }))
      .get(topic)!
      .get(0);

  it('commits offsets in a transaction under the current generation and member', async () => {
    await commitOffset('5', joined);
    expect(await stableOffset()).toBe('5');
    expect(await committed()).toBe('5');
  });

  it('refuses offsets under a stale generation or an unknown member, and they never become visible', async () => {
    await expect(commitOffset('6', { ...joined, generationId: joined.generationId - 1 })).rejects.toMatchObject({
      type: 'ILLEGAL_GENERATION',
    });
    await expect(commitOffset('7', { ...joined, memberId: 'not-a-member' })).rejects.toMatchObject({
      type: 'UNKNOWN_MEMBER_ID',
    });
    expect(await stableOffset()).toBe('5');
  });

  it('answers UNSTABLE_OFFSET_COMMIT with require_stable while a transaction holds the offsets; committedOffsets waits it out', async () => {
    const tx = await producer.transaction();
    await tx.sendOffsets({
      consumerGroupId: groupId,
      topics: [{ topic, partitions: [{ partition: 0, offset: '9' }] }],
      ...joined,
    });
    try {
      // Without require_stable the pending offsets are invisible: the old ones are answered.
      expect(await committed(false)).toBe('5');
      await expect(committed(true)).rejects.toMatchObject({ type: 'UNSTABLE_OFFSET_COMMIT', retriable: true });
      const stable = committedOffsets(admin, groupId, [topic], { requireStable: true, unstableWithinMs: 60_000 });
      let settled = false;
      void stable.finally(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(settled).toBe(false);
      await tx.commit();
      expect((await stable).get(topic)!.get(0)).toBe('9');
    } finally {
      if (tx.isActive()) await tx.abort();
    }
  });

  it('fetchOffsets without topics answers every topic the group committed offsets for (OffsetFetch v7, a null topic array)', async () => {
    const group = uniqueName('eos-v2-all-topics');
    const other = uniqueName('eos-v2-other');
    await createTopics(admin, [{ topic: other, partitions: 1 }]);
    await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 1, offset: '3' }] });
    await admin.setOffsets({ groupId: group, topic: other, partitions: [{ partition: 0, offset: '4' }] });

    const all = await admin.fetchOffsets({ groupId: group });
    const committedOf = (t: string) =>
      all.find((e) => e.topic === t)?.partitions.map(({ partition, offset }) => ({ partition, offset }));
    expect(all.map((e) => e.topic).sort()).toEqual([topic, other].sort());
    expect(committedOf(topic)).toEqual([{ partition: 1, offset: '3' }]);
    expect(committedOf(other)).toEqual([{ partition: 0, offset: '4' }]);
    expect((await admin.fetchOffsets({ groupId: group, topics: [] })).map((e) => e.topic).sort()).toEqual(
      [topic, other].sort(),
    );
  });

  it('gives up on unstable offsets after unstableWithinMs with the broker error', async () => {
    const tx = await producer.transaction();
    await tx.sendOffsets({
      consumerGroupId: groupId,
      topics: [{ topic, partitions: [{ partition: 0, offset: '11' }] }],
      ...joined,
    });
    try {
      await expect(
        committedOffsets(admin, groupId, [topic], { requireStable: true, unstableWithinMs: 500, unstableRetryMs: 50 }),
      ).rejects.toMatchObject({ type: 'UNSTABLE_OFFSET_COMMIT' });
    } finally {
      await tx.abort();
    }
    // Aborted: the offsets the transaction carried are dropped.
    await waitUntil(async () => (await committed(true).catch(() => undefined)) === '9', {
      timeoutMs: 30_000,
      message: 'the aborted offsets dropped',
    });
  });
});
