import { GenericContainer } from 'testcontainers';
import { BrokerAnswers, createTopics, kafkaClient, kafkaImage, readTopic, startKafka, uniqueName } from '../src';

// startKafka's readiness is "the broker answers on the host listener", not a line in a followed
// log: Podman ends a followed log stream early when it rotates its events file, and Testcontainers
// stops and removes a container whose wait fails — a campaign lost a healthy broker that way
// (docs/faults.md).
describe('startKafka', () => {
  it('gives a broker that answers at once, and again after a restart, with its records kept', async () => {
    const k = await startKafka();
    try {
      const kafka = kafkaClient(k.brokers);
      const topic = uniqueName('restart');
      const admin = kafka.admin();
      await admin.connect();
      await createTopics(admin, [{ topic }]);
      await admin.disconnect();
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      await producer.send({ topic, messages: [{ key: 'a', value: 'before' }] });
      await producer.disconnect();

      await k.container.restart({ timeout: 10_000 });

      const after = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await after.connect();
      await after.send({ topic, messages: [{ key: 'b', value: 'after' }] });
      await after.disconnect();
      const records = await readTopic(kafka, topic);
      expect(records.map((r) => r.value)).toEqual(['before', 'after']);
    } finally {
      await k.stop();
    }
  }, 300_000);

  it('fails at once, naming the exit code, when the broker container stops while starting', async () => {
    await expect(
      new GenericContainer(kafkaImage())
        .withEntrypoint(['/bin/sh', '-c', 'sleep 1; exit 3'])
        .withWaitStrategy(new BrokerAnswers(['127.0.0.1:1']).withStartupTimeout(120_000))
        .start(),
    ).rejects.toThrow(/stopped while starting: exited, exit code 3/); // not the 120 s timeout's message
  }, 180_000);
});
