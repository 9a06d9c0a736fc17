import type { Kafka, Message, Producer } from 'kafkajs';
import { createTopics, kafkaClient, readTopic, testBrokers, uniqueName } from '@state-relay/testkit';

// The patched produce path (patches/kafkajs@2.2.4.patch, issue 32: a headers object encoded once,
// messages grouped per partition in linear time) against the real broker: transactions of the
// processor's shape (changelog records sharing a unit's headers object, results without headers)
// read back as sent, and a headers object changed between transactions read back as changed.

describe('the patched produce path against a real broker', () => {
  let kafka: Kafka;
  let producer: Producer;
  let changelog: string;
  let results: string;

  beforeAll(async () => {
    kafka = kafkaClient(testBrokers());
    const admin = kafka.admin();
    await admin.connect();
    changelog = uniqueName('encoding-changelog');
    results = uniqueName('encoding-results');
    await createTopics(admin, [
      { topic: changelog, partitions: 4 },
      { topic: results, partitions: 3 },
    ]);
    await admin.disconnect();
    producer = kafka.producer({ transactionalId: uniqueName('encoding-tx'), idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
  }, 120_000);

  afterAll(async () => {
    await producer?.disconnect();
  });

  const transaction = async (topicMessages: Array<{ topic: string; messages: Message[] }>, outcome = 'commit') => {
    const tx = await producer.transaction();
    await tx.sendBatch({ topicMessages });
    await (outcome === 'commit' ? tx.commit() : tx.abort());
  };

  it('reads back every record, with its headers, of transactions sharing and changing headers objects', async () => {
    const units = [0, 1, 2, 3].map((task) => ({ 'sr.input-positions': `commands=${10 + task},events=${20 + task}` }));
    const changelogRecords: Message[] = [];
    const resultRecords: Message[] = [];
    for (let i = 0; i < 200; i++) {
      const task = i % 4;
      changelogRecords.push({
        key: `account-${i}`,
        value: i % 9 === 0 ? null : `entity-${i}`,
        partition: task,
        headers: units[task],
      });
      resultRecords.push({ key: `cmd-${i}`, value: `result-${i}` });
    }
    await transaction([
      { topic: changelog, messages: changelogRecords },
      { topic: results, messages: resultRecords },
    ]);

    // The next unit of task 0 reuses and changes the object (the processor builds a new one; the
    // encoder must not send the old bytes either way). An aborted transaction in between.
    await transaction(
      [{ topic: changelog, messages: [{ key: 'lost', value: 'x', partition: 0, headers: units[0] }] }],
      'abort',
    );
    units[0]!['sr.input-positions'] = 'commands=11,events=21';
    (units[0] as Record<string, string>)['added'] = 'yes';
    const later: Message[] = ['a', 'b', 'c'].map((k) => ({ key: k, value: k, partition: 0, headers: units[0] }));
    await transaction([{ topic: changelog, messages: later }]);

    const read = await readTopic(kafka, changelog, { isolation: 'read_committed', timeoutMs: 60_000 });
    const expected = [...changelogRecords.slice(0, 200), ...later].map((m, i) => ({
      partition: m.partition,
      key: m.key,
      value: m.value,
      headers:
        i >= 200
          ? { 'sr.input-positions': 'commands=11,events=21', added: 'yes' }
          : { 'sr.input-positions': `commands=${10 + m.partition!},events=${20 + m.partition!}` },
    }));
    const byPartition = (p: number) =>
      read
        .filter((r) => r.partition === p)
        .map(({ partition, key, value, headers }) => ({ partition, key, value, headers }));
    for (let p = 0; p < 4; p++) {
      expect(byPartition(p)).toEqual(expected.filter((e) => e.partition === p));
    }

    const answers = await readTopic(kafka, results, { isolation: 'read_committed', timeoutMs: 60_000 });
    expect(answers).toHaveLength(200);
    for (const r of answers) {
      expect(r.headers).toEqual({});
      expect(r.value).toBe(`result-${r.key!.slice('cmd-'.length)}`);
    }
  });
});
