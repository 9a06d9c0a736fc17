import type { Admin, Kafka, Producer } from 'kafkajs';
import { createTopics, kafkaClient, testBrokers, uniqueName } from '@state-relay/testkit';
import { endOffsets, KafkaRuntimeError, settledEnds } from '../src';

// settledEnds against the real broker: an open transaction holds its partition's last stable
// offset below the high watermark; the end comes back only once that transaction has ended, and
// holds its records when it committed. The other partition is not waited for.

describe('settledEnds against a real broker', () => {
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let topic: string;

  beforeAll(async () => {
    kafka = kafkaClient(testBrokers());
    admin = kafka.admin();
    await admin.connect();
    topic = uniqueName('settled-ends');
    await createTopics(admin, [{ topic, partitions: 2 }]);
    producer = kafka.producer({
      transactionalId: uniqueName('settled-ends-tx'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
  }, 120_000);
  afterAll(async () => {
    await producer?.disconnect();
    await admin?.disconnect();
  });

  it('waits for a transaction that had written to the partition, then includes what it committed', async () => {
    const tx = await producer.transaction();
    await tx.send({ topic, messages: [0, 1, 2].map((i) => ({ key: `k${i}`, value: 'v', partition: 0 })) });
    const before = await endOffsets(admin, topic);
    expect(before.get(0)).toBe(0n); // read_committed: the open transaction's records are not there yet

    let settled: Map<number, bigint> | undefined;
    const waiting = settledEnds(kafka, topic, [0], { ends: before, withinMs: 30_000, intervalMs: 20 }).then(
      (ends) => (settled = ends),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(settled).toBeUndefined(); // still open: nothing is settled
    await tx.commit();
    await waiting;
    expect(settled!.get(0)).toBe(4n); // three records and the commit marker
    expect([...settled!.keys()]).toEqual([0]);
  }, 60_000);

  it('answers at once for a partition no transaction holds', async () => {
    const ends = await endOffsets(admin, topic);
    await expect(settledEnds(kafka, topic, [1], { ends, withinMs: 5_000 })).resolves.toEqual(
      new Map([[1, ends.get(1)]]),
    );
  });

  it('gives up after withinMs, naming the partition still held', async () => {
    const tx = await producer.transaction();
    await tx.send({ topic, messages: [{ key: 'held', value: 'v', partition: 1 }] });
    const ends = await endOffsets(admin, topic);
    const err = await settledEnds(kafka, topic, [1], { ends, withinMs: 1_000, intervalMs: 50 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KafkaRuntimeError);
    expect(err).toMatchObject({ code: 'CHANGELOG_NOT_SETTLED' });
    expect((err as Error).message).toMatch(
      new RegExp(`^${topic}: a transaction still holds partition\\(s\\) 1 after 1000 ms`),
    );
    await tx.abort();
  }, 30_000);
});
