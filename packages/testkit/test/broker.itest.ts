import { Kafka } from 'kafkajs';
import { createTopics, kafkaClient, readTopic, testBrokers, uniqueName, waitUntil } from '../src';

// These prove the broker is a real Kafka and that kafkajs's transactional path — the one
// the processor's exactly-once rests on — behaves as the design assumes.
describe('a real Kafka broker under Testcontainers', () => {
  let kafka: Kafka;
  beforeAll(() => {
    kafka = kafkaClient(testBrokers());
  });

  async function fresh(partitions = 1): Promise<{ input: string; output: string }> {
    const input = uniqueName('in');
    const output = uniqueName('out');
    const admin = kafka.admin();
    await admin.connect();
    await createTopics(admin, [
      { topic: input, partitions },
      { topic: output, partitions },
    ]);
    await admin.disconnect();
    return { input, output };
  }

  async function committedOffset(groupId: string, topic: string): Promise<string> {
    const admin = kafka.admin();
    await admin.connect();
    const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
    await admin.disconnect();
    return entry?.partitions[0]?.offset ?? '-1';
  }

  /** Consumes `input`, produces each value upper-cased to `output` in one transaction, then commits or aborts. */
  async function transformOnce(
    topics: { input: string; output: string },
    groupId: string,
    outcome: 'commit' | 'abort',
  ): Promise<number> {
    const producer = kafka.producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 });
    const consumer = kafka.consumer({ groupId, readUncommitted: false });
    await producer.connect();
    await consumer.connect();
    await consumer.subscribe({ topic: topics.input, fromBeginning: true });
    let handled = 0;
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        if (handled > 0) return;
        const tx = await producer.transaction();
        await tx.send({
          topic: topics.output,
          messages: batch.messages.map((m) => ({ key: m.key, value: String(m.value).toUpperCase() })),
        });
        await tx.sendOffsets({
          consumerGroupId: groupId,
          topics: [
            {
              topic: batch.topic,
              partitions: [{ partition: batch.partition, offset: String(BigInt(batch.lastOffset()) + 1n) }],
            },
          ],
        });
        if (outcome === 'commit') await tx.commit();
        else await tx.abort();
        handled = batch.messages.length;
      },
    });
    await waitUntil(() => handled > 0, { message: 'the transform to handle a batch' });
    await consumer.disconnect();
    await producer.disconnect();
    return handled;
  }

  async function seed(topic: string, values: string[]): Promise<void> {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 }); // a retried send is not a second record
    await producer.connect();
    await producer.send({ topic, messages: values.map((value, i) => ({ key: `k${i}`, value })) });
    await producer.disconnect();
  }

  it('round-trips records with keys and headers', async () => {
    const { input } = await fresh(3);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 }); // a retried send is not a second record
    await producer.connect();
    await producer.send({
      topic: input,
      messages: Array.from({ length: 30 }, (_, i) => ({
        key: `key-${i}`,
        value: `value-${i}`,
        headers: { n: String(i) },
      })),
    });
    await producer.disconnect();

    const records = await readTopic(kafka, input, { count: 30 });
    expect(records).toHaveLength(30);
    const byKey = new Map(records.map((r) => [r.key, r]));
    expect(byKey.get('key-7')?.value).toBe('value-7');
    expect(byKey.get('key-7')?.headers.n).toBe('7');
    // Same key, same partition: the default partitioner is deterministic.
    expect(new Set(records.map((r) => r.partition)).size).toBeGreaterThan(1);
  });

  it('a committed consume-transform-produce transaction makes its output and offsets visible', async () => {
    const topics = await fresh();
    await seed(topics.input, ['a', 'b', 'c']);
    const groupId = uniqueName('group');

    const handled = await transformOnce(topics, groupId, 'commit');

    expect(handled).toBe(3);
    const out = await readTopic(kafka, topics.output, { isolation: 'read_committed' });
    expect(out.map((r) => r.value).sort()).toEqual(['A', 'B', 'C']);
    expect(await committedOffset(groupId, topics.input)).toBe('3');
  });

  it('an aborted transaction leaves no visible output and no committed offsets', async () => {
    const topics = await fresh();
    await seed(topics.input, ['x', 'y']);
    const groupId = uniqueName('group');

    await transformOnce(topics, groupId, 'abort');

    const committedView = await readTopic(kafka, topics.output, { isolation: 'read_committed' });
    expect(committedView).toHaveLength(0);
    // The records were written, then aborted: a read_uncommitted reader still sees them.
    const uncommittedView = await readTopic(kafka, topics.output, { isolation: 'read_uncommitted', count: 2 });
    expect(uncommittedView.map((r) => r.value).sort()).toEqual(['X', 'Y']);
    expect(await committedOffset(groupId, topics.input)).toBe('-1');
  });
});
