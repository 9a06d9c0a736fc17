import { Kafka } from 'kafkajs';
import { createTopics, kafkaClient, testBrokers, uniqueName, waitUntil } from '@state-relay/testkit';
import {
  assertCoPartitioned,
  CoPartitionedAssigner,
  connectTaskProducer,
  ensureTopics,
  NotCoPartitionedError,
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

  it('restores committed changelog records from a checkpoint to the end, skipping aborted ones', async () => {
    const changelog = uniqueName('changelog');
    const admin = kafka.admin();
    await admin.connect();
    await createTopics(admin, [{ topic: changelog, partitions: 2, compacted: true }]);
    await admin.disconnect();
    const producer = await connectTaskProducer({ kafka, appId: uniqueName('app'), task: 0 });
    const write = async (values: string[], outcome: 'commit' | 'abort') => {
      const tx = await producer.transaction();
      await tx.send({ topic: changelog, messages: values.map((v) => ({ key: v, value: v, partition: 0 })) });
      await (outcome === 'commit' ? tx.commit() : tx.abort());
    };
    await write(['a', 'b'], 'commit'); // offsets 0,1 + marker 2
    await write(['lost'], 'abort'); // 3 + marker 4
    await write(['c'], 'commit'); // 5 + marker 6
    await producer.disconnect();

    const seen: string[] = [];
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
        resume.push([partition, next]);
      },
    });

    expect(seen).toEqual(['b', 'c']);
    expect(summary.records).toBe(2);
    // Partition 1 is empty: nothing to restore there.
    expect(summary.partitions).toBe(1);
    expect(resume.at(-1)?.[1]).toBeGreaterThanOrEqual(6n);
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
});
