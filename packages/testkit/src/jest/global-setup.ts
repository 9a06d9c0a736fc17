import { startKafka, StartedKafka } from '../kafka-container';

declare global {
  var __STATE_RELAY_KAFKA__: StartedKafka | undefined;
}

/** One broker per test run; test files get its address through the environment. */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const kafka = await startKafka();
  globalThis.__STATE_RELAY_KAFKA__ = kafka;
  process.env.STATE_RELAY_TEST_BROKERS = kafka.brokers.join(',');
  process.env.STATE_RELAY_TEST_KAFKA_ID = kafka.container.getId();
  process.stdout.write(`\n[testkit] Kafka ${kafka.brokers.join(',')} ready in ${Date.now() - started} ms\n`);
}
