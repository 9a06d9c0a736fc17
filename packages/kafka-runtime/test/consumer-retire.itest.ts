import { Kafka, type Consumer } from 'kafkajs';
import { createTopics, kafkaClient, testBrokers, uniqueName, waitUntil } from '@state-relay/testkit';
import { OWNER_REPLACES, retireConsumer } from '../src';

// A fault campaign run (seed 2014172433, docs/faults.md) ended with two of four tasks owned by
// nobody: the processor had replaced a stalled consumer while kafkajs's own restart of it was
// joining the group, and kafkajs's disconnect does not stop a join in flight (the runner's stop
// is a no-op until the join completes). The join completed after the owner let go, and that
// member held its partitions, read by no one, for as long as it heartbeat.
describe('retiring a kafkajs consumer (real broker)', () => {
  let kafka: Kafka;
  beforeAll(() => {
    kafka = kafkaClient(testBrokers());
  });

  async function topicWithGroup(): Promise<{ topic: string; groupId: string }> {
    const topic = uniqueName('retire');
    const admin = kafka.admin();
    await admin.connect();
    await createTopics(admin, [{ topic, partitions: 2 }]);
    await admin.disconnect();
    return { topic, groupId: uniqueName('retire-group') };
  }

  async function members(groupId: string): Promise<{ state: string; members: number }> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { groups } = await admin.describeGroups([groupId]);
      // Kafka 4's coordinator deletes a classic group whose last member left before any offset
      // was committed (Dead, as an unknown group reads); 3.x keeps it Empty.
      const state = groups[0]!.state === 'Dead' ? 'Empty' : groups[0]!.state;
      return { state, members: groups[0]!.members.length };
    } finally {
      await admin.disconnect();
    }
  }

  function consumer(groupId: string, retry: object = {}): Consumer {
    return kafka.consumer({ groupId, sessionTimeout: 6_000, heartbeatInterval: 500, maxWaitTimeInMs: 100, retry });
  }

  it('retireConsumer waits for a join in flight, then disconnects: no member is left behind', async () => {
    const { topic, groupId } = await topicWithGroup();
    const c = consumer(groupId, OWNER_REPLACES);
    await c.connect();
    await c.subscribe({ topic, fromBeginning: true });
    const running = c.run({ eachBatch: async () => undefined });
    await retireConsumer(c, 1, 10_000, running);
    expect(await members(groupId)).toEqual({ state: 'Empty', members: 0 });
    // And it stays so: nothing rejoins later.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await members(groupId)).toEqual({ state: 'Empty', members: 0 });
  }, 120_000);

  it('OWNER_REPLACES: a crash kafkajs would restart from is final (CRASH with restart: false, no new join)', async () => {
    const { topic, groupId } = await topicWithGroup();
    const c = consumer(groupId, { retries: 0, ...OWNER_REPLACES });
    const crashes: boolean[] = [];
    let joins = 0;
    c.on(c.events.CRASH, ({ payload }) => crashes.push(payload.restart));
    c.on(c.events.GROUP_JOIN, () => joins++);
    await c.connect();
    await c.subscribe({ topic, fromBeginning: true });
    await c.run({
      eachBatch: async () => {
        throw Object.assign(new Error('a retriable failure'), { retriable: true });
      },
    });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ value: 'x', partition: 0 }] });
    await producer.disconnect();
    await waitUntil(() => crashes.length > 0, { timeoutMs: 30_000, message: 'the consumer to crash' });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect({ crashes, joins }).toEqual({ crashes: [false], joins: 1 });
    await c.disconnect();
  }, 120_000);
});
