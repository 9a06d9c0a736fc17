import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  commandIdFor,
  decodeCommandResult,
  encodeCommand,
  type CommandResult,
  type DomainEvent,
  type UpdateCommand,
} from '@state-relay/contracts';
import type { EntityDomain } from '@state-relay/domain';
import { ensureTopics } from '@state-relay/kafka-runtime';
import { kafkaClient, metricSum, readTopic, testBrokers, waitUntil } from '@state-relay/testkit';
import type { Kafka } from 'kafkajs';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { createProcessorMetrics } from '../src/metrics';
import { Processor } from '../src/processor';
import { counterDomain } from './counter-domain';
import { changelogState, newDeployment, produceEvents, waitCaughtUp, type Deployment } from './harness';

// A poison record (one that fails the same way every time) must not stop its task: it becomes a
// dead letter (or, for a command, an `invalid` result) and every other record of the partition
// is processed. Unit tests of the pieces: fold.test.ts, poison.test.ts.

const silent = pino({ level: process.env.STATE_RELAY_TEST_LOG_LEVEL ?? 'silent' });
const AS_OF = Date.UTC(2026, 10, 1);

/** Counters that remember their key; the domain throws on a second event for 'boom', and its `reset` throws on 'boom'. */
const touchyDomain: EntityDomain = {
  ...counterDomain,
  name: 'touchy-counters',
  applyEvent(key, event, current) {
    if (key === 'boom' && current) throw new RangeError('boom cannot count twice');
    const next = counterDomain.applyEvent(key, event, current);
    return next && { ...next, name: key };
  },
  domainActions: {
    reset: (current, params, ctx) => {
      if (current['name'] === 'boom') throw new Error('boom cannot be reset');
      return counterDomain.domainActions['reset']!(current, params, ctx);
    },
  },
};

/** Counters whose `added` may carry `pad`: that many characters are added to the entity (to outgrow a topic's limit). */
const paddedDomain: EntityDomain = {
  ...counterDomain,
  name: 'padded-counters',
  validateEvent: (event) =>
    counterDomain.validateEvent({ ...event, data: { amount: event.data['amount'] ?? 0 } } as DomainEvent),
  applyEvent(key, event, current) {
    const next = counterDomain.applyEvent(key, event, current);
    const pad = event.data['pad'];
    return next && typeof pad === 'number' ? { ...next, pad: 'p'.repeat(pad) } : next;
  },
};

const added = (key: string, amount: number, extra: Record<string, number> = {}) => ({
  key,
  event: { type: 'added', at: 1, data: { amount, ...extra } } as DomainEvent,
});

function command(scanId: string, key: string, action: UpdateCommand['action']): UpdateCommand {
  return {
    commandId: commandIdFor(scanId, key),
    scanId,
    key,
    asOf: AS_OF,
    condition: { field: 'total', op: 'exists' },
    action,
    issuedAt: AS_OF,
  };
}

/** What the counters should hold: the sum and count of `added` per key, for the keys given. */
function oracle(events: Array<{ key: string; event: DomainEvent }>, keys: (key: string) => boolean) {
  const state = new Map<string, { total: number; adds: number }>();
  for (const { key, event } of events) {
    if (!keys(key)) continue;
    const s = state.get(key) ?? { total: 0, adds: 0 };
    state.set(key, { total: s.total + (event.data['amount'] as number), adds: s.adds + 1 });
  }
  return state;
}

describe('poison records, against a real broker', () => {
  let kafka: Kafka;
  let d: Deployment;
  let stateDir: string;
  let processor: Processor | undefined;
  let metrics: ReturnType<typeof createProcessorMetrics>;
  beforeAll(() => {
    kafka = kafkaClient(testBrokers());
  });
  afterEach(async () => {
    await processor?.stop();
    processor = undefined;
    rmSync(stateDir, { recursive: true, force: true });
    const admin = kafka.admin();
    await admin.connect();
    await admin
      .deleteTopics({
        topics: [d.eventsTopic, d.commandsTopic, d.resultsTopic, d.deadLetterTopic, d.changelogTopic],
      })
      .catch(() => undefined);
    await admin.disconnect();
  });

  async function start(domain: EntityDomain, partitions: number, env: Record<string, string> = {}): Promise<Processor> {
    d = newDeployment(testBrokers(), partitions);
    stateDir = mkdtempSync(join(tmpdir(), 'poison-'));
    const config = loadConfig({
      KAFKA_BROKERS: d.brokers.join(','),
      APP_ID: d.appId,
      STORE_NAME: 'accounts',
      EVENTS_TOPIC: d.eventsTopic,
      COMMANDS_TOPIC: d.commandsTopic,
      RESULTS_TOPIC: d.resultsTopic,
      DEAD_LETTER_TOPIC: d.deadLetterTopic,
      PARTITIONS: String(partitions),
      STATE_DIR: stateDir,
      SESSION_TIMEOUT_MS: '6000',
      ...env,
    });
    metrics = createProcessorMetrics();
    const started = new Processor({ config, domain, logger: silent, metrics });
    processor = started;
    return started;
  }

  async function ready(p: Processor): Promise<void> {
    await p.start();
    await waitUntil(() => p.isReady && p.tasks.owned.length === d.partitions, {
      timeoutMs: 60_000,
      message: 'the processor to be ready',
    });
  }

  async function sendCommands(commands: UpdateCommand[]): Promise<CommandResult[]> {
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: d.commandsTopic,
      messages: commands.map((c) => ({ key: c.key, value: encodeCommand(c) })),
    });
    await producer.disconnect();
    const records = await readTopic(kafka, d.resultsTopic, { count: commands.length, isolation: 'read_committed' });
    return records.map((r) => decodeCommandResult(Buffer.from(r.key!), Buffer.from(r.value!)));
  }

  const metric = async (name: string, labels = '') => metricSum(await metrics.registry.metrics(), name, labels);

  it('dead-letters an event the domain throws on, answers invalid to a command whose action throws, and processes every other key', async () => {
    const p = await start(touchyDomain, 2);
    await ready(p);
    const events = [
      ...Array.from({ length: 40 }, (_, i) => added(`c-${i % 10}`, i)),
      added('boom', 1),
      added('boom', 2), // the domain throws: a dead letter, boom keeps total 1
      ...Array.from({ length: 40 }, (_, i) => added(`c-${i % 10}`, 100 + i)),
    ];
    await produceEvents(kafka, d.eventsTopic, events);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    const state = await changelogState(kafka, d.changelogTopic);
    const expected = oracle(events, (k) => k !== 'boom');
    for (const [key, value] of expected) expect([key, state.get(key)?.value]).toEqual([key, { ...value, name: key }]);
    expect(state.get('boom')?.value).toEqual({ total: 1, adds: 1, name: 'boom' });
    const [dead] = await readTopic(kafka, d.deadLetterTopic, { count: 1, isolation: 'read_committed' });
    expect(dead!.headers['dlq.code']).toBe('PROCESSING_FAILED');
    expect(dead!.headers['dlq.reason']).toBe('applying the event failed: RangeError: boom cannot count twice');
    expect(dead!.key).toBe('boom');

    const results = await sendCommands([
      command('scan-boom', 'boom', { domain: 'reset' }),
      command('scan-c1', 'c-1', { domain: 'reset' }),
    ]);
    const byScan = Object.fromEntries(results.map((r) => [r.scanId, r]));
    expect(byScan['scan-boom']).toMatchObject({
      outcome: 'invalid',
      reason: 'domain action "reset" failed: boom cannot be reset',
    });
    expect(byScan['scan-c1']).toMatchObject({ outcome: 'applied' });
    expect(await metric('processor_dead_letters_total', 'code="PROCESSING_FAILED"')).toBe(1);
    expect(await metric('processor_task_failures_total', 'kind="fold"')).toBe(0);
    expect(await metric('processor_task_failures_total', 'kind="store"')).toBe(0);
  });

  it('refuses the command that would grow an entity past ENTITY_MAX_BYTES; the task keeps RUNNING and later events commit', async () => {
    const p = await start(counterDomain, 1, { ENTITY_MAX_BYTES: '2048' });
    await ready(p);
    await produceEvents(kafka, d.eventsTopic, [added('grow', 1)]);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    const sets = [0, 1, 2, 3, 4].map((i) => command(`scan-set-${i}`, 'grow', { set: { [`f${i}`]: 'x'.repeat(600) } }));
    const results = await sendCommands(sets);
    const outcomes = Object.fromEntries(results.map((r) => [r.scanId, r.outcome]));
    expect(outcomes).toEqual({
      'scan-set-0': 'applied',
      'scan-set-1': 'applied',
      'scan-set-2': 'applied',
      'scan-set-3': 'invalid', // 4 × 600 bytes of fields: over 2048
      'scan-set-4': 'invalid',
    });
    expect(results.find((r) => r.scanId === 'scan-set-3')?.reason).toMatch(
      /over the limit of 2048 \(ENTITY_MAX_BYTES\)/,
    );
    expect(p.tasks.stateOf(0)).toBe('RUNNING');

    await produceEvents(kafka, d.eventsTopic, [added('grow', 5), added('other', 7)]);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    const state = await changelogState(kafka, d.changelogTopic);
    expect(state.get('grow')).toMatchObject({ value: { total: 6, adds: 2 } });
    expect(Object.keys(state.get('grow')!.value).sort()).toEqual(['adds', 'f0', 'f1', 'f2', 'total']);
    expect(state.get('other')?.value).toEqual({ total: 7, adds: 1 });
    expect(await metric('processor_task_failures_total', 'kind="fold"')).toBe(0);
    expect(await metric('processor_task_failures_total', 'kind="store"')).toBe(0);
  });

  it('isolates a record whose transaction the broker refuses, after the bounded attempts: a dead letter, and the rest commits', async () => {
    const p = await start(paddedDomain, 1, { POISON_MAX_ATTEMPTS: '2' });
    // The changelog exists already and takes smaller records than the processor's entity limit.
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [
      { topic: d.changelogTopic, partitions: 1, compacted: true, configs: { 'max.message.bytes': '4096' } },
    ]).finally(() => admin.disconnect());
    await ready(p);

    const events = [
      ...Array.from({ length: 10 }, (_, i) => added(`k-${i % 5}`, i)),
      added('big', 1, { pad: 10_000 }), // the changelog refuses this entity
      ...Array.from({ length: 10 }, (_, i) => added(`k-${i % 5}`, 10 + i)),
    ];
    await produceEvents(kafka, d.eventsTopic, events);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    const state = await changelogState(kafka, d.changelogTopic);
    const expected = oracle(events, (k) => k !== 'big');
    expect(state.size).toBe(expected.size);
    for (const [key, value] of expected) expect([key, state.get(key)?.value]).toEqual([key, value]);
    const [dead] = await readTopic(kafka, d.deadLetterTopic, { count: 1, isolation: 'read_committed' });
    expect(dead!.key).toBe('big');
    expect(dead!.headers['dlq.code']).toBe('RECORD_REJECTED');
    expect(dead!.headers['dlq.reason']).toMatch(
      /^the broker refused what the record produced \((MESSAGE_TOO_LARGE|RECORD_LIST_TOO_LARGE)\)$/,
    );
    expect(await metric('processor_poison_records_total')).toBe(1);
    expect(await metric('processor_poison_isolations_total')).toBe(1);
    expect(await metric('processor_dead_letters_total', 'code="RECORD_REJECTED"')).toBe(1);
    expect(await metric('processor_task_failures_total', 'kind="commit"')).toBeGreaterThanOrEqual(2);
    expect(p.tasks.stateOf(0)).toBe('RUNNING');
  });

  it('under exactly-once v2 a refused record fails only its own task: the others commit and never isolate (issue 31.4)', async () => {
    const p = await start(paddedDomain, 3, { POISON_MAX_ATTEMPTS: '2', EXACTLY_ONCE: 'v2' });
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [
      { topic: d.changelogTopic, partitions: 3, compacted: true, configs: { 'max.message.bytes': '4096' } },
    ]).finally(() => admin.disconnect());
    await ready(p);

    // Load on every partition all along, so that every instance transaction the refused record
    // is in also holds the other tasks' units (before the split they failed with it each time).
    const events: Array<{ key: string; event: DomainEvent }> = [];
    for (let round = 0; round < 40; round++) {
      const more = Array.from({ length: 12 }, (_, i) => added(`k-${i}`, 1_000 + round));
      if (round === 0) more.splice(6, 0, added('big', 1, { pad: 10_000 })); // with the others' records
      events.push(...more);
      await produceEvents(kafka, d.eventsTopic, more);
      await new Promise((r) => setTimeout(r, 100));
    }
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    const state = await changelogState(kafka, d.changelogTopic);
    const expected = oracle(events, (k) => k !== 'big');
    expect(state.size).toBe(expected.size);
    for (const [key, value] of expected) expect([key, state.get(key)?.value]).toEqual([key, value]);
    const [dead] = await readTopic(kafka, d.deadLetterTopic, { count: 1, isolation: 'read_committed' });
    expect(dead!.key).toBe('big');
    // Only the task whose record the broker refused failed (its POISON_MAX_ATTEMPTS attempts) and
    // isolated; before the split every task in the shared transaction failed with it each time.
    expect(await metric('processor_instance_transactions_total', 'outcome="refused"')).toBeGreaterThanOrEqual(1);
    expect(await metric('processor_task_failures_total', 'kind="commit"')).toBe(2);
    expect(await metric('processor_poison_isolations_total')).toBe(1);
    expect(await metric('processor_poison_records_total')).toBe(1);
    for (const task of [0, 1, 2]) expect(p.tasks.stateOf(task)).toBe('RUNNING');
  });
});
