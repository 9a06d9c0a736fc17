import { createHash } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import fc from 'fast-check';
import type { KeyedEvent } from '@state-relay/domain';
import { validateAccountEvent } from '@state-relay/accounts';
import { accountsOracle } from '@state-relay/accounts/testing';
import { DEAD_LETTER_HEADERS, decodeCommand, decodeEvent, encodeEvent, isDecodeError } from '@state-relay/contracts';
import { kafkaClient, testBrokers, uniqueName, waitUntil } from '@state-relay/testkit';
import type { Kafka, Message } from 'kafkajs';
import { changelogState, demoEvents, newDeployment, ProcessorProcess, waitCaughtUp, type Deployment } from './harness';

// Random bytes on both input topics of a real processor (a child process): every record that
// cannot be decoded or validated lands in the dead-letter topic, byte for byte, with its code,
// reason and source in headers; the processor neither crashes nor stalls, and every valid
// event interleaved with the poison is applied exactly as the oracle folds it.

const SEED = Number(process.env.PROPERTY_SEED ?? Date.now() % 2 ** 31);
const seedNote = `(PROPERTY_SEED=${SEED})`;

interface Produced {
  topic: string;
  key: Buffer | null;
  value: Buffer | null;
}

/** What the processor must do with a record, computed with the same decoders it uses. */
function expectedCode(d: Deployment, r: Produced): string | null {
  try {
    if (r.topic === d.commandsTopic) {
      decodeCommand(r.key, r.value);
      return null;
    }
    const event = decodeEvent(r.key, r.value);
    return validateAccountEvent(event) === null ? null : 'EVENT_INVALID';
  } catch (err) {
    if (isDecodeError(err)) return err.code;
    throw err;
  }
}

const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((b) => Buffer.from(b));
const utf8 = (s: string) => Buffer.from(s, 'utf8');
/** Keys: absent, empty, random bytes (often not UTF-8), too long, or plausible entity keys. */
const badKey: fc.Arbitrary<Buffer | null> = fc.oneof(
  fc.constant(null),
  fc.constant(Buffer.alloc(0)),
  bytes(40),
  fc.nat({ max: 200 }).map((n) => Buffer.alloc(513 + n, 0x61)),
  fc.constantFrom('acct-000001', 'acct-000002', '__proto__', 'constructor', '🔑').map(utf8),
);
/** Values: absent, random bytes, text, JSON of the wrong shape, near-events, and huge-ish blobs. */
const badValue: fc.Arbitrary<Buffer | null> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: bytes(300), weight: 4 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 100 }).map(utf8), weight: 2 },
  { arbitrary: fc.json({ maxDepth: 3 }).map(utf8), weight: 2 },
  {
    arbitrary: fc
      .record({
        type: fc.constantFrom('activity', 'payment', 'teleported', ''),
        at: fc.oneof(fc.integer(), fc.string()),
        data: fc.jsonValue({ maxDepth: 2 }),
      })
      .map((e) => utf8(JSON.stringify(e))),
    weight: 2,
  },
  { arbitrary: fc.constant(utf8('{"type":"activity","at":1,"data":{},"__proto__":{"polluted":true}}')), weight: 1 },
  // Huge-ish: 50-200 KB of bytes, kept apart from each other (see the large-records test for more).
  { arbitrary: fc.integer({ min: 50_000, max: 200_000 }).map((n) => Buffer.alloc(n, 0x7b)), weight: 1 },
);
const badRecord = fc.record({ toCommands: fc.boolean(), key: badKey, value: badValue });

/** Reads a topic's records with their raw bytes (testkit's readTopic decodes them as UTF-8). */
async function readRaw(kafka: Kafka, topic: string, count: number, timeoutMs = 90_000) {
  const consumer = kafka.consumer({ groupId: uniqueName('raw'), readUncommitted: false, maxWaitTimeInMs: 100 });
  const records: Array<{ key: Buffer | null; value: Buffer | null; headers: Record<string, string> }> = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(message.headers ?? {})) if (v !== undefined) headers[k] = String(v);
        records.push({ key: message.key, value: message.value, headers });
      },
    });
    await waitUntil(() => records.length >= count, {
      timeoutMs,
      message: `${count} records on ${topic} (got ${records.length}) ${seedNote}`,
    });
    await new Promise((r) => setTimeout(r, 1_000)); // anything beyond the expected count is a bug too
  } finally {
    await consumer.disconnect();
  }
  return records;
}

const digest = (b: Buffer | null) =>
  b === null || b.length === 0 ? '-' : createHash('sha256').update(b).digest('hex').slice(0, 16);

/** Produces in the given order; large records go alone so no request exceeds the broker's limit. */
async function produceInOrder(kafka: Kafka, records: Produced[]): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    let run: Produced[] = [];
    let runBytes = 0;
    const flush = async () => {
      if (run.length === 0) return;
      await producer.send({
        topic: run[0]!.topic,
        messages: run.map((r): Message => ({ key: r.key, value: r.value })),
      });
      run = [];
      runBytes = 0;
    };
    for (const r of records) {
      const size = (r.key?.length ?? 0) + (r.value?.length ?? 0);
      if (run.length > 0 && (run[0]!.topic !== r.topic || runBytes + size > 256_000 || run.length >= 500))
        await flush();
      run.push(r);
      runBytes += size;
    }
    await flush();
  } finally {
    await producer.disconnect();
  }
}

function pidOf(p: ProcessorProcess): number | undefined {
  // The harness keeps the child private; its pid is how we tell "never restarted" apart.
  return (p as unknown as { child?: ChildProcess }).child?.pid;
}

describe('the processor on random bytes (property-based, real broker)', () => {
  let kafka: Kafka;
  const running: ProcessorProcess[] = [];
  beforeAll(() => {
    kafka = kafkaClient(testBrokers());
  });
  afterEach(async () => {
    for (const p of running.splice(0)) {
      await p.kill();
      p.cleanup();
    }
  });

  async function launch(d: Deployment): Promise<ProcessorProcess> {
    const p = new ProcessorProcess(d);
    running.push(p);
    await p.start();
    await p.waitReady();
    return p;
  }

  it('dead-letters every bad record on both inputs with its reason, never crashes, and applies every valid event', async () => {
    const d = newDeployment(testBrokers(), 3);
    const proc = await launch(d);
    const pid = pidOf(proc);

    const valid = demoEvents(150, 6, SEED % 100_000); // 900 events
    const poison = fc.sample(badRecord, { numRuns: 160, seed: SEED });
    // Interleave: the valid events keep their order; poison goes in at random places.
    const random = fc.sample(fc.nat({ max: valid.length }), { numRuns: poison.length, seed: SEED + 1 });
    const at = new Map<number, Produced[]>();
    poison.forEach((p, i) => {
      const list = at.get(random[i]!) ?? [];
      list.push({ topic: p.toCommands ? d.commandsTopic : d.eventsTopic, key: p.key, value: p.value });
      at.set(random[i]!, list);
    });
    const records: Produced[] = [];
    const appliedEvents: KeyedEvent[] = [];
    for (let i = 0; i <= valid.length; i++) {
      for (const r of at.get(i) ?? []) {
        records.push(r);
        // A random record that happens to be a valid event or command is not poison.
        if (expectedCode(d, r) === null && r.topic === d.eventsTopic)
          appliedEvents.push({ key: r.key!.toString('utf8'), event: decodeEvent(r.key, r.value) });
      }
      const e = valid[i];
      if (e) {
        records.push({ topic: d.eventsTopic, key: utf8(e.key), value: encodeEvent(e.event) });
        appliedEvents.push(e);
      }
    }
    const bad = records.map((r) => ({ r, code: expectedCode(d, r) })).filter((x) => x.code !== null);
    expect(bad.length).toBeGreaterThan(100);
    expect(bad.some((b) => b.r.topic === d.commandsTopic) && bad.some((b) => b.r.topic === d.eventsTopic)).toBe(true);

    await produceInOrder(kafka, records);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    await waitCaughtUp(kafka, d.appId, d.commandsTopic);

    // Every bad record is in the dead-letter topic once, with its original bytes and the code
    // the decoders give it; nothing else is.
    const dlq = await readRaw(kafka, d.deadLetterTopic, bad.length);
    const expected = bad.map(({ r, code }) => `${r.topic} ${digest(r.key)} ${digest(r.value)} ${code}`).sort();
    const actual = dlq
      .map(
        (m) =>
          `${m.headers[DEAD_LETTER_HEADERS.sourceTopic]} ${digest(m.key)} ${digest(m.value)} ${m.headers[DEAD_LETTER_HEADERS.code]}`,
      )
      .sort();
    expect({ seed: SEED, dlq: actual }).toEqual({ seed: SEED, dlq: expected });
    for (const m of dlq) {
      expect(m.headers[DEAD_LETTER_HEADERS.reason]?.length ?? 0).toBeGreaterThan(0);
      expect(m.headers[DEAD_LETTER_HEADERS.sourcePartition]).toMatch(/^\d+$/);
      expect(m.headers[DEAD_LETTER_HEADERS.sourceOffset]).toMatch(/^\d+$/);
      expect(m.headers[DEAD_LETTER_HEADERS.failedAt]).toMatch(/^\d+$/);
    }

    // Valid events all applied, in order, once.
    const oracle = accountsOracle(appliedEvents);
    const state = await changelogState(kafka, d.changelogTopic);
    expect({ seed: SEED, size: state.size }).toEqual({ seed: SEED, size: oracle.size });
    for (const [key, value] of oracle) expect([key, state.get(key)?.value]).toEqual([key, value]);
    for (const key of [...oracle.keys()].slice(0, 10))
      expect((await proc.getState(key)).body.value).toEqual(oracle.get(key));

    // Never crashed, never stalled: the same process, still ready, no task failed.
    expect(pidOf(proc)).toBe(pid);
    expect((await fetch(`${await proc.url}/readyz`)).status).toBe(200);
    expect(proc.output).not.toMatch(/task failed|consumer crashed|"level":(50|60)/);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  // Records the broker accepted on the input topic must also fit in the dead-letter topic, where
  // each gets ~250 bytes of dlq.* headers and shares one transaction with its batch's others.
  it.each([
    ['three 600 KB poison records arriving in one batch', [600_000, 600_000, 600_000]],
    ['one poison record just under the broker’s 1 MB message limit', [1_048_400]],
  ])('dead-letters %s, then keeps going', async (_what, sizes) => {
    const d = newDeployment(testBrokers(), 1);
    const proc = await launch(d);
    const key = utf8('acct-000001');
    await proc.stop(); // so the records are all waiting when it comes back, and arrive in one fetch
    running.splice(running.indexOf(proc), 1);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (const size of sizes)
      await producer.send({ topic: d.eventsTopic, messages: [{ key, value: Buffer.alloc(size, 0x7b) }] }); // not JSON
    await producer.send({
      topic: d.eventsTopic,
      messages: [{ key, value: encodeEvent({ type: 'signed_up', at: 1_000, data: {} }) }],
    });
    await producer.disconnect();
    const again = new ProcessorProcess(d, proc.stateDir);
    running.push(again);
    await again.start();
    await again.waitReady();

    await waitCaughtUp(kafka, d.appId, d.eventsTopic, 60_000).catch((err: Error) => {
      throw new Error(`${err.message}; the processor's last words:\n${again.output.slice(-2_000)}`);
    });
    const dlq = await readRaw(kafka, d.deadLetterTopic, sizes.length);
    expect(dlq.map((m) => [m.headers[DEAD_LETTER_HEADERS.code], m.value?.length])).toEqual(
      sizes.map((n) => ['NOT_JSON', n]),
    );
    expect((await again.getState('acct-000001')).body.value).toMatchObject({ status: 'active' });
  });
});
