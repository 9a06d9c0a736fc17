import type { Admin, Kafka, Producer, Transaction } from 'kafkajs';
import { createTopics, kafkaClient, testBrokers, uniqueName } from '@state-relay/testkit';
import { openTopicFetcher } from '../src/kafkajs';

// Two producers' aborted transactions in one partition, the way a zombie and the task's new
// owner can leave them around a rebalance: B begins before A, A aborts first. The broker lists a
// partition's aborted transactions in the order their aborts completed (its transaction index),
// so a read_committed fetch from offset 0 lists A's before B's although B's began first. Restore
// reads through TopicFetcher (kafkajs's Batch and its aborted-transaction filter, as patched).

const Broker = require('kafkajs/src/broker') as {
  prototype: { fetch(...args: unknown[]): Promise<FetchResponse> };
};
interface FetchResponse {
  responses: Array<{
    topicName: string;
    partitions: Array<{ partition: number; abortedTransactions: Array<{ producerId: string; firstOffset: string }> }>;
  }>;
}

describe('read_committed restore with aborted transactions of two producers in one partition', () => {
  let kafka: Kafka;
  let admin: Admin;
  const producers: Producer[] = [];
  const topic = uniqueName('aborted-changelog');

  const transactional = async (name: string) => {
    const producer = kafka.producer({
      transactionalId: uniqueName(name),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    producers.push(producer);
    return producer;
  };
  const send = (tx: Transaction, value: string) => tx.send({ topic, messages: [{ partition: 0, key: value, value }] });

  beforeAll(async () => {
    kafka = kafkaClient(testBrokers());
    admin = kafka.admin();
    await admin.connect();
    await createTopics(admin, [{ topic, partitions: 1, compacted: true }]);
  }, 120_000);

  afterAll(async () => {
    for (const p of producers) await p.disconnect().catch(() => undefined);
    await admin?.disconnect();
  });

  it('passes on no record of either aborted transaction and every committed one', async () => {
    const [a, b, c] = [await transactional('zombie'), await transactional('owner'), await transactional('other')];

    const c1 = await c.transaction();
    await send(c1, 'c0');
    await c1.commit();

    const txB = await b.transaction();
    await send(txB, 'b0'); // B's transaction begins first
    const txA = await a.transaction();
    await send(txA, 'a0');
    await send(txB, 'b1');
    await txA.abort(); // A's abort completes first
    await send(txB, 'b2');
    await txB.abort();

    const c2 = await c.transaction();
    await send(c2, 'c1');
    await c2.commit();
    const txB2 = await b.transaction();
    await send(txB2, 'b3');
    await txB2.commit();

    const [{ high }] = await admin.fetchTopicOffsets(topic);
    const spy = jest.spyOn(Broker.prototype, 'fetch');
    const fetcher = await openTopicFetcher(kafka, topic);
    const values: string[] = [];
    const listed: Array<{ producerId: string; firstOffset: string }> = [];
    try {
      let offset = '0';
      for (let round = 0; round < 20 && BigInt(offset) < BigInt(high!); round++) {
        const [nodeId] = Object.keys(fetcher.leaders([0]));
        const [batch] = await fetcher.fetch(nodeId!, {
          partitions: [{ partition: 0, fetchOffset: offset, maxBytes: 1_048_576 }],
          maxBytes: 1_048_576,
          maxWaitTime: 100,
        });
        const response = (await spy.mock.results.at(-1)!.value) as FetchResponse;
        if (round === 0) listed.push(...response.responses[0]!.partitions[0]!.abortedTransactions);
        values.push(...batch!.messages.map((m) => String((m as { value: Buffer }).value)));
        if (batch!.lastOffset === undefined) break;
        offset = (BigInt(batch!.lastOffset) + 1n).toString();
      }
    } finally {
      spy.mockRestore();
      await fetcher.close();
    }

    // The broker listed both aborted transactions, the later-begun one (A's) first.
    expect(listed).toHaveLength(2);
    expect(BigInt(listed[0]!.firstOffset)).toBeGreaterThan(BigInt(listed[1]!.firstOffset));
    expect(values).toEqual(['c0', 'c1', 'b3']);
  });
});
