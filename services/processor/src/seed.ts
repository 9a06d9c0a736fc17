import { generateAccountEvents } from '@state-relay/accounts';
import { encodeEvent } from '@state-relay/contracts';
import { Kafka, logLevel } from 'kafkajs';

/**
 * Demo data: produces accounts (30% of them dormant for over 30 days) to the events topic,
 * the way any producer would. `node dist/seed.js [accounts] [eventsPerAccount]`;
 * KAFKA_BROKERS and EVENTS_TOPIC as for the processor.
 */
async function seed(): Promise<void> {
  const accounts = Number(process.argv[2] ?? 10_000);
  const perAccount = Number(process.argv[3] ?? 5);
  const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
  const topic = process.env.EVENTS_TOPIC ?? 'accounts-events';
  if (brokers.length === 0) throw new Error('KAFKA_BROKERS is required');
  if (!Number.isInteger(accounts) || accounts < 1 || !Number.isInteger(perAccount) || perAccount < 1) {
    throw new Error('usage: seed [accounts >= 1] [eventsPerAccount >= 1]');
  }
  const events = generateAccountEvents({
    accounts,
    eventsPerAccount: perAccount,
    seed: 42,
    now: Date.now(),
    dormantFraction: 0.3,
  });
  const kafka = new Kafka({ clientId: 'state-relay-seed', brokers, logLevel: logLevel.ERROR });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let i = 0; i < events.length; i += 5_000) {
    await producer.send({
      topic,
      messages: events.slice(i, i + 5_000).map(({ key, event }) => ({ key, value: encodeEvent(event) })),
    });
  }
  await producer.disconnect();
  process.stdout.write(`seeded ${accounts} accounts (${events.length} events) into ${topic}\n`);
  await waitForProcessor(kafka, process.env.APP_ID ?? 'state-relay', topic);
}

/** Waits until the processor's group has committed offsets at the end of every partition. */
async function waitForProcessor(kafka: Kafka, groupId: string, topic: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  const started = Date.now();
  try {
    const ends = await admin.fetchTopicOffsets(topic);
    for (;;) {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      let behind = 0n;
      for (const end of ends) {
        const offset = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
        const at = offset === '-1' ? BigInt(end.low) : BigInt(offset);
        if (BigInt(end.high) > at) behind += BigInt(end.high) - at;
      }
      if (behind === 0n) break;
      if (Date.now() - started > 600_000)
        throw new Error(`the processor (group ${groupId}) is still ${behind} events behind`);
      process.stdout.write(`\rwaiting for the processor: ${behind} events to go   `);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await admin.disconnect();
  }
  process.stdout.write(`\rthe processor applied them all (${((Date.now() - started) / 1000).toFixed(1)} s)        \n`);
}

seed().catch((err: unknown) => {
  process.stderr.write(`seed failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
