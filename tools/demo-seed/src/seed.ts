import { generateAccountEvents } from '@state-relay/accounts/testing';
import { encodeEvent } from '@state-relay/contracts';
import { Kafka, logLevel } from 'kafkajs';

const USAGE = 'usage: seed [--if-empty] [accounts >= 1] [eventsPerAccount >= 1]';

/**
 * Demo data: produces accounts (30% of them dormant for over 30 days) to the events topic,
 * the way any producer would, then waits until the processor has applied the whole topic.
 * `node dist/seed.js [--if-empty] [accounts] [eventsPerAccount]`; KAFKA_BROKERS and
 * EVENTS_TOPIC as for the processor. With --if-empty it produces nothing when the topic already
 * holds events (a stack seeded before), so running the demo again does not add the same
 * accounts' events once more.
 */
async function seed(): Promise<void> {
  const args = process.argv.slice(2);
  const ifEmpty = args.includes('--if-empty');
  const [accountsArg, perAccountArg, ...rest] = args.filter((a) => a !== '--if-empty');
  const accounts = Number(accountsArg ?? 10_000);
  const perAccount = Number(perAccountArg ?? 5);
  const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
  const topic = process.env.EVENTS_TOPIC ?? 'accounts-events';
  if (brokers.length === 0) throw new Error('KAFKA_BROKERS is required');
  if (
    rest.length > 0 ||
    !Number.isInteger(accounts) ||
    accounts < 1 ||
    !Number.isInteger(perAccount) ||
    perAccount < 1
  ) {
    throw new Error(USAGE);
  }
  const kafka = new Kafka({ clientId: 'state-relay-seed', brokers, logLevel: logLevel.ERROR });
  const groupId = process.env.APP_ID ?? 'state-relay';
  if (ifEmpty) {
    const held = await eventsHeld(kafka, topic);
    if (held > 0n) {
      process.stdout.write(
        `not seeding: ${topic} already holds ${held} events (an earlier seed), and producing them again would ` +
          `add the same accounts' events once more. The sweep runs on the accounts there; ` +
          `"bash scripts/demo.sh purge" deletes the stack's data for a fresh seed.\n`,
      );
      await waitForProcessor(kafka, groupId, topic);
      return;
    }
  }
  const events = generateAccountEvents({
    accounts,
    eventsPerAccount: perAccount,
    seed: 42,
    now: Date.now(),
    dormantFraction: 0.3,
  });
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
  await waitForProcessor(kafka, groupId, topic);
}

/** Records ever written to the topic: the sum of its partitions' end offsets (0 only if never written). */
async function eventsHeld(kafka: Kafka, topic: string): Promise<bigint> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + BigInt(p.high), 0n);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Waits until the processor's group has committed offsets at the end of every partition. On a
 * terminal the count is redrawn in place; otherwise (a pipe, a log) one line at most every 2 s.
 */
async function waitForProcessor(kafka: Kafka, groupId: string, topic: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  const started = Date.now();
  const tty = process.stdout.isTTY === true;
  let lastLine = -Infinity;
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
      if (tty) process.stdout.write(`\r\x1b[2Kwaiting for the processor: ${behind} events to go`);
      else if (Date.now() - lastLine >= 2_000) {
        process.stdout.write(`waiting for the processor: ${behind} events to go\n`);
        lastLine = Date.now();
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await admin.disconnect();
  }
  const done = `the processor applied them all (${((Date.now() - started) / 1000).toFixed(1)} s)\n`;
  process.stdout.write(tty ? `\r\x1b[2K${done}` : done);
}

seed().catch((err: unknown) => {
  process.stderr.write(`seed failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
