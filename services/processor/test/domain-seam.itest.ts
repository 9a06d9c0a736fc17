import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  changelogTopicName,
  commandIdFor,
  decodeCommandResult,
  encodeCommand,
  type DomainEvent,
  type UpdateCommand,
} from '@state-relay/contracts';
import { kafkaClient, readTopic, testBrokers, waitUntil } from '@state-relay/testkit';
import type { Kafka } from 'kafkajs';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { createProcessorMetrics } from '../src/metrics';
import { Processor } from '../src/processor';
import { counterDomain } from './counter-domain';
import { changelogState, newDeployment, produceEvents, waitCaughtUp } from './harness';

// The processor on a domain other than accounts (docs/domains.md): the same machinery, topics,
// results and changelog, with only the EntityDomain swapped.

const silent = pino({ level: process.env.STATE_RELAY_TEST_LOG_LEVEL ?? 'silent' });
const AS_OF = Date.UTC(2026, 10, 1);

function command(scanId: string, key: string, extra: Partial<UpdateCommand>): UpdateCommand {
  return {
    commandId: commandIdFor(scanId, key),
    scanId,
    key,
    asOf: AS_OF,
    condition: { field: 'total', op: 'gt', value: 10 },
    action: { domain: 'reset' },
    issuedAt: AS_OF,
    ...extra,
  };
}

describe('the processor on another domain (counters), against a real broker', () => {
  let kafka: Kafka;
  let stateDir: string;
  let processor: Processor | undefined;
  beforeAll(() => {
    kafka = kafkaClient(testBrokers());
  });
  afterEach(async () => {
    await processor?.stop();
    processor = undefined;
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('folds its events, applies commands through the same aggregate path, and writes results and changelog', async () => {
    const d = newDeployment(testBrokers(), 2);
    const changelog = changelogTopicName(d.appId, 'counters');
    stateDir = mkdtempSync(join(tmpdir(), 'counters-'));
    const config = loadConfig({
      KAFKA_BROKERS: d.brokers.join(','),
      APP_ID: d.appId,
      STORE_NAME: 'counters',
      EVENTS_TOPIC: d.eventsTopic,
      COMMANDS_TOPIC: d.commandsTopic,
      RESULTS_TOPIC: d.resultsTopic,
      DEAD_LETTER_TOPIC: d.deadLetterTopic,
      PARTITIONS: String(d.partitions),
      STATE_DIR: stateDir,
      SESSION_TIMEOUT_MS: '6000',
    });
    expect(config.changelogTopic).toBe(changelog);
    processor = new Processor({ config, domain: counterDomain, logger: silent, metrics: createProcessorMetrics() });
    await processor.start();
    const running = processor;
    await waitUntil(() => running.isReady && running.tasks.owned.length === d.partitions, {
      timeoutMs: 60_000,
      message: 'the processor to be ready',
    });

    const ev = (type: string, at: number, data: Record<string, number> = {}): DomainEvent => ({ type, at, data });
    await produceEvents(kafka, d.eventsTopic, [
      { key: 'c-1', event: ev('added', 1, { amount: 5 }) },
      { key: 'c-1', event: ev('added', 2, { amount: 7 }) },
      { key: 'c-2', event: ev('added', 3, { amount: 3 }) },
      { key: 'c-2', event: ev('cleared', 4) },
      { key: 'c-3', event: ev('added', 5, { amount: 1 }) },
      { key: 'c-4', event: ev('multiplied', 6, { by: 2 }) }, // refused by the domain: a dead letter
    ]);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    let state = await changelogState(kafka, changelog);
    expect(Object.fromEntries([...state].map(([k, e]) => [k, [e.version, e.value]]))).toEqual({
      'c-1': [2, { total: 12, adds: 2 }],
      'c-3': [1, { total: 1, adds: 1 }],
    });
    expect(running.tasks.read('c-1')?.entity.value).toEqual({ total: 12, adds: 2 });
    expect(running.tasks.read('c-2')).toBeUndefined(); // cleared: deleted, a tombstone on the changelog
    const [dead] = await readTopic(kafka, d.deadLetterTopic, { count: 1, isolation: 'read_committed' });
    expect(dead!.headers['dlq.code']).toBe('EVENT_INVALID');
    expect(dead!.headers['dlq.reason']).toMatch(/unknown counter event type/);

    const commands = [
      command('scan-reset', 'c-1', { expectedVersion: 2 }), // total 12 > 10: reset through the domain action
      command('scan-small', 'c-3', {}), // total 1: the condition is false on the current value
      command('scan-missing', 'c-9', {}),
      command('scan-unknown', 'c-3', { action: { domain: 'mark_dormant' } }), // not an action of this domain
    ];
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: d.commandsTopic,
      messages: commands.map((c) => ({ key: c.key, value: encodeCommand(c) })),
    });
    await producer.disconnect();

    const results = (
      await readTopic(kafka, d.resultsTopic, { count: commands.length, isolation: 'read_committed' })
    ).map((r) => decodeCommandResult(Buffer.from(r.key!), Buffer.from(r.value!)));
    const outcome = Object.fromEntries(results.map((r) => [r.scanId, [r.outcome, r.version]]));
    expect(outcome).toEqual({
      'scan-reset': ['applied', 3],
      'scan-small': ['condition_false', 1],
      'scan-missing': ['not_found', undefined],
      'scan-unknown': ['invalid', 1],
    });
    expect(results.find((r) => r.scanId === 'scan-unknown')?.reason).toMatch(/mark_dormant/);

    await waitCaughtUp(kafka, d.appId, d.commandsTopic);
    state = await changelogState(kafka, changelog);
    expect(state.get('c-1')).toMatchObject({ version: 3, value: { total: 0, adds: 2 } });
    expect(state.get('c-3')).toMatchObject({ version: 1, value: { total: 1, adds: 1 } });
    expect(state.has('c-2')).toBe(false);
  });
});
