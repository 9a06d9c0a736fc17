import { accountsOracle } from '@state-relay/accounts/testing';
import { commandIdFor, decodeCommandResult, encodeCommand, type UpdateCommand } from '@state-relay/contracts';
import { kafkaClient, readTopic, testBrokers, waitUntil } from '@state-relay/testkit';
import type { Kafka } from 'kafkajs';
import {
  changelogState,
  demoEvents,
  newDeployment,
  produceEvents,
  ProcessorProcess,
  waitCaughtUp,
  type Deployment,
} from './harness';

// Both exactly-once modes: v1 (a transaction per task) and v2 (one per instance, KIP-447).
describe.each(['v1', 'v2'] as const)('processor against a real broker (EXACTLY_ONCE=%s)', (mode) => {
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

  async function launch(d: Deployment, stateDir?: string): Promise<ProcessorProcess> {
    const p = new ProcessorProcess(d, stateDir);
    running.push(p);
    await p.start({ EXACTLY_ONCE: mode });
    await p.waitReady();
    return p;
  }

  function expectOracle(state: Map<string, { value: unknown }>, oracle: Map<string, unknown>): void {
    expect(state.size).toBe(oracle.size);
    for (const [key, value] of oracle) expect([key, state.get(key)?.value]).toEqual([key, value]);
  }

  it('folds thousands of events across partitions into exactly the oracle’s state', async () => {
    const d = newDeployment(testBrokers(), 4);
    const proc = await launch(d);
    const events = demoEvents(600, 8, 11);
    await produceEvents(kafka, d.eventsTopic, events);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    const oracle = accountsOracle(events);
    expectOracle(await changelogState(kafka, d.changelogTopic), oracle);
    const sample = events[123]!.key;
    const { status, body } = await proc.getState(sample);
    expect(status).toBe(200);
    expect(body.value).toEqual(oracle.get(sample));
  });

  it('gives every command exactly one result, through the same aggregate path', async () => {
    const d = newDeployment(testBrokers(), 2);
    const proc = await launch(d);
    const events = demoEvents(5, 2, 3);
    await produceEvents(kafka, d.eventsTopic, events);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    const keys = [...accountsOracle(events).keys()].sort();
    const before = await proc.getState(keys[0]!);
    const version = before.body.version as number;

    const asOf = Date.UTC(2026, 10, 1);
    const cmd = (name: string, key: string, extra: Partial<UpdateCommand>): UpdateCommand => ({
      commandId: commandIdFor(`scan-${name}`, key),
      scanId: `scan-${name}`,
      key,
      asOf,
      condition: { field: 'status', op: 'exists' },
      action: { set: { flagged: true } },
      issuedAt: asOf,
      ...extra,
    });
    const applied = cmd('applied', keys[0]!, { expectedVersion: version });
    const commands = [
      applied,
      cmd('false', keys[1]!, { condition: { field: 'status', op: 'eq', value: 'nonexistent' } }),
      cmd('conflict', keys[2]!, { expectedVersion: 999 }),
      cmd('missing', 'acct-nope', {}),
      cmd('invalid', keys[3]!, { condition: { field: 'status', op: 'eqq', value: 1 } as never }),
      applied, // the same command again: re-emitted by a restarted scanner, say
      cmd('delete', keys[4]!, { action: { delete: true } }),
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
    const byScan = Object.fromEntries(results.map((r) => [r.scanId, r.outcome]));
    expect(results).toHaveLength(commands.length);
    expect(
      results
        .filter((r) => r.scanId === 'scan-applied')
        .map((r) => r.outcome)
        .sort(),
    ).toEqual(['applied', 'duplicate']);
    expect(byScan['scan-false']).toBe('condition_false');
    expect(byScan['scan-conflict']).toBe('version_conflict');
    expect(byScan['scan-missing']).toBe('not_found');
    expect(byScan['scan-invalid']).toBe('invalid');
    expect(results.find((r) => r.scanId === 'scan-invalid')?.reason).toContain('/condition/op');
    expect(byScan['scan-delete']).toBe('applied');

    await waitCaughtUp(kafka, d.appId, d.commandsTopic);
    const after = await proc.getState(keys[0]!);
    expect(after.body.value).toMatchObject({ flagged: true });
    expect(after.body.version).toBe(version + 1); // applied once, not twice
    expect((await proc.getState(keys[1]!)).body.value).not.toHaveProperty('flagged');
    expect((await proc.getState(keys[4]!)).status).toBe(404);
    const changelog = await changelogState(kafka, d.changelogTopic);
    expect(changelog.has(keys[4]!)).toBe(false); // a tombstone, so restore cannot resurrect it
  });

  it('dead-letters undecodable and invalid input with the reason, and keeps going', async () => {
    const d = newDeployment(testBrokers(), 1);
    await launch(d);
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: d.eventsTopic,
      messages: [
        { key: 'acct-1', value: '{not json' },
        { key: 'acct-1', value: JSON.stringify({ type: 'teleported', at: 1, data: {} }) },
        { key: null, value: JSON.stringify({ type: 'signed_up', at: 1, data: {} }) },
        { key: 'acct-1', value: JSON.stringify({ type: 'signed_up', at: 1000, data: {} }) },
      ],
    });
    await producer.send({
      topic: d.commandsTopic,
      messages: [{ key: 'acct-1', value: JSON.stringify({ scanId: 's' }) }],
    });
    await producer.disconnect();

    const dlq = await readTopic(kafka, d.deadLetterTopic, { count: 4, isolation: 'read_committed' });
    const codes = dlq.map((r) => r.headers['dlq.code']).sort();
    expect(codes).toEqual(['EVENT_INVALID', 'KEY_MISSING', 'NOT_JSON', 'SCHEMA_INVALID']);
    const notJson = dlq.find((r) => r.headers['dlq.code'] === 'NOT_JSON')!;
    expect(notJson.value).toBe('{not json');
    expect(notJson.headers['dlq.source.topic']).toBe(d.eventsTopic);
    expect(notJson.headers['dlq.source.offset']).toBe('0');
    expect(dlq.find((r) => r.headers['dlq.code'] === 'EVENT_INVALID')!.headers['dlq.reason']).toMatch(
      /value.type: unknown account event type/,
    );
    expect(dlq.find((r) => r.headers['dlq.code'] === 'SCHEMA_INVALID')!.headers['dlq.source.topic']).toBe(
      d.commandsTopic,
    );

    // The good event after the poison was applied.
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    const state = await changelogState(kafka, d.changelogTopic);
    expect(state.get('acct-1')?.value).toMatchObject({ status: 'active' });
  });

  it.each([
    ['a clean stop (SIGTERM)', 'stop'],
    ['kill -9', 'kill'],
  ] as const)('after %s mid-stream and a restart, the state equals the oracle', async (_name, how) => {
    const d = newDeployment(testBrokers(), 3);
    const first = await launch(d);
    const events = demoEvents(400, 10, 5);
    const half = Math.floor(events.length / 2);
    await produceEvents(kafka, d.eventsTopic, events.slice(0, half));
    // Stop while it is working through the second half.
    const rest = produceEvents(kafka, d.eventsTopic, events.slice(half));
    await waitUntil(async () => (await first.getState(events[0]!.key)).status === 200, { message: 'some progress' });
    if (how === 'kill') await first.kill();
    else expect(await first.stop()).toBe(0);
    await rest;

    const second = await launch(d, first.stateDir);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    const oracle = accountsOracle(events);
    expectOracle(await changelogState(kafka, d.changelogTopic), oracle);
    const key = events.at(-1)!.key;
    expect((await second.getState(key)).body.value).toEqual(oracle.get(key));
  });

  it('restores a task store from the changelog alone, and two instances share the partitions across a rebalance', async () => {
    const d = newDeployment(testBrokers(), 4);
    const a = await launch(d);
    const events = demoEvents(300, 6, 9);
    await produceEvents(kafka, d.eventsTopic, events.slice(0, 900));
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    // A second instance with an empty state dir joins: tasks move and restore from the changelog.
    const b = await launch(d);
    await waitUntil(
      async () => {
        const [ra, rb] = await Promise.all(
          [a, b].map(async (p) => (await fetch(`${await p.url}/readyz`)).json() as Promise<{ tasks: number[] }>),
        );
        return ra!.tasks.length === 2 && rb!.tasks.length === 2;
      },
      { timeoutMs: 90_000, message: 'the two instances to own two tasks each' },
    );
    await produceEvents(kafka, d.eventsTopic, events.slice(900));
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    const oracle = accountsOracle(events);
    for (const key of [...oracle.keys()].slice(0, 40)) {
      const [sa, sb] = await Promise.all([a.getState(key), b.getState(key)]);
      const found = sa.status === 200 ? sa : sb;
      expect([key, found.body.value]).toEqual([key, oracle.get(key)]);
    }

    // A leaves: B takes every task and serves the whole state.
    expect(await a.stop()).toBe(0);
    await waitUntil(
      async () => ((await (await fetch(`${await b.url}/readyz`)).json()) as { tasks: number[] }).tasks.length === 4,
      {
        timeoutMs: 90_000,
        message: 'B to own all tasks',
      },
    );
    await b.waitReady();
    for (const key of [...oracle.keys()].slice(0, 40))
      expect([key, (await b.getState(key)).body.value]).toEqual([key, oracle.get(key)]);
    expectOracle(await changelogState(kafka, d.changelogTopic), oracle);
  });

  if (mode === 'v2') {
    it('v2: one instance transaction per commit interval carries every task; none per task', async () => {
      const d = newDeployment(testBrokers(), 4);
      const proc = await launch(d);
      const events = demoEvents(400, 6, 5);
      const started = Date.now();
      await produceEvents(kafka, d.eventsTopic, events);
      await waitCaughtUp(kafka, d.appId, d.eventsTopic);
      const seconds = (Date.now() - started) / 1000;
      expectOracle(await changelogState(kafka, d.changelogTopic), accountsOracle(events));
      const instance = await proc.metric('processor_instance_transactions_total', 'outcome="committed"');
      const units = await proc.metric('processor_transactions_total');
      // Every task committed units (each task's partition got events) inside the instance's transactions:
      expect(units).toBeGreaterThan(instance);
      // and the instance made at most one per commit interval (100 ms) or per full unit.
      expect(instance).toBeGreaterThan(0);
      expect(instance).toBeLessThanOrEqual(Math.ceil(seconds * 10) + 2);
      expect(await proc.metric('processor_instance_transactions_total', 'outcome="failed"')).toBe(0);
    });
  }
});
