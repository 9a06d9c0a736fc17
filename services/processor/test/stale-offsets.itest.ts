import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountsDomain } from '@state-relay/accounts';
import { accountsOracle } from '@state-relay/accounts/testing';
import { commandIdFor, decodeCommandResult, encodeCommand, type UpdateCommand } from '@state-relay/contracts';
import { kafkaClient, readTopic, testBrokers, waitUntil } from '@state-relay/testkit';
import type { Kafka } from 'kafkajs';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { createProcessorMetrics } from '../src/metrics';
import { Processor } from '../src/processor';
import {
  changelogState,
  demoEvents,
  newDeployment,
  produceEvents,
  waitCaughtUp,
  type Deployment,
  deploymentEnv,
} from './harness';

// The group's committed offsets read stale after the fence (EndTxn answered before the group
// coordinator materialised the transaction's offsets). The restore now reads with require_stable
// (the kafkajs patch), which closes the race on Kafka 2.5+; this checks the defence behind it,
// which older brokers still rely on. The race is made deterministic: with no member in the group, its offsets are set back to the
// start, which is what such a stale read returns. A task must continue from what its store and
// the changelog say it committed, and apply nothing twice.

const silent = pino({ level: process.env.STATE_RELAY_TEST_LOG_LEVEL ?? 'silent' });

function processorFor(d: Deployment, stateDir: string) {
  const config = loadConfig({
    ...deploymentEnv(d),
    STATE_DIR: stateDir,
    SESSION_TIMEOUT_MS: '6000',
  });
  const metrics = createProcessorMetrics();
  return { processor: new Processor({ config, domain: accountsDomain, logger: silent, metrics }), metrics };
}

async function ready(processor: Processor): Promise<void> {
  await waitUntil(() => processor.isReady && processor.tasks.owned.length > 0, {
    timeoutMs: 60_000,
    message: 'the processor to be ready',
  });
}

function setFlag(scanId: string, key: string): UpdateCommand {
  const asOf = Date.UTC(2026, 10, 1);
  return {
    commandId: commandIdFor(scanId, key),
    scanId,
    key,
    asOf,
    condition: { field: 'status', op: 'exists' },
    action: { set: { [scanId]: true } },
    issuedAt: asOf,
  };
}

async function produceCommands(kafka: Kafka, topic: string, commands: UpdateCommand[]): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({ topic, messages: commands.map((c) => ({ key: c.key, value: encodeCommand(c) })) });
  await producer.disconnect();
}

/** What a stale OffsetFetch returns: the group's offsets of both inputs back at the start. */
async function rollBackGroup(kafka: Kafka, d: Deployment): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const partitions = Array.from({ length: d.partitions }, (_, partition) => ({ partition, offset: '0' }));
    for (const topic of [d.eventsTopic, d.commandsTopic])
      await admin.setOffsets({ groupId: d.appId, topic, partitions });
  } finally {
    await admin.disconnect();
  }
}

async function staleCount(metrics: ReturnType<typeof createProcessorMetrics>): Promise<number> {
  return (await metrics.staleOffsets.get()).values.reduce((n, v) => n + v.value, 0);
}

describe('input positions from the changelog', () => {
  let kafka: Kafka;
  const dirs: string[] = [];
  const running: Processor[] = [];
  const tmp = (name: string) => {
    const dir = mkdtempSync(join(tmpdir(), `${name}-`));
    dirs.push(dir);
    return dir;
  };
  beforeAll(() => {
    kafka = kafkaClient(testBrokers());
  });
  afterEach(async () => {
    for (const p of running.splice(0).reverse()) await p.stop().catch(() => undefined);
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('committed offsets read stale after the fence: neither the kept store nor a new owner applies anything twice', async () => {
    const d = newDeployment(testBrokers(), 2);
    const dirA = tmp('owner-a');
    const inputs: ReturnType<typeof demoEvents> = [];
    const commands: UpdateCommand[] = [];
    const round = async (processor: Processor, n: number) => {
      const events = demoEvents(60, 3, 60 + n).map(({ key, event }) => ({ key: `r${n}-${key}`, event }));
      inputs.push(...events);
      // Commands on accounts of every round so far, on every partition.
      const keys = [...new Set(inputs.map((e) => e.key))].sort().filter((_, i) => i % 3 === 0);
      const sent = keys.map((k) => setFlag(`scan${n}`, k));
      commands.push(...sent);
      await produceEvents(kafka, d.eventsTopic, events);
      await waitCaughtUp(kafka, d.appId, d.eventsTopic); // the accounts exist before their commands
      await produceCommands(kafka, d.commandsTopic, sent);
      await waitCaughtUp(kafka, d.appId, d.commandsTopic);
      await ready(processor);
    };

    const a1 = processorFor(d, dirA).processor;
    running.push(a1);
    await a1.start();
    await ready(a1);
    await round(a1, 1);
    await a1.stop();

    // The same instance again, on its kept store (positions from its own commits).
    await rollBackGroup(kafka, d);
    const a2 = processorFor(d, dirA);
    running.push(a2.processor);
    await a2.processor.start();
    await ready(a2.processor);
    await round(a2.processor, 2);
    expect(await staleCount(a2.metrics)).toBe(2 * d.partitions); // both inputs of both tasks were behind
    await a2.processor.stop();

    // A new owner with no store (positions learned from the changelog's headers).
    await rollBackGroup(kafka, d);
    const b = processorFor(d, tmp('owner-b'));
    running.push(b.processor);
    await b.processor.start();
    await ready(b.processor);
    await round(b.processor, 3);
    expect(await staleCount(b.metrics)).toBe(2 * d.partitions);

    // Balances move with every event: an event applied twice shows here.
    const flags = new Map<string, Record<string, boolean>>();
    for (const c of commands) flags.set(c.key, { ...flags.get(c.key), [c.scanId]: true });
    const oracle = accountsOracle(inputs);
    const state = await changelogState(kafka, d.changelogTopic);
    expect(state.size).toBe(oracle.size);
    for (const [key, value] of oracle) {
      const want = { ...value, ...flags.get(key) };
      expect([key, state.get(key)?.value]).toEqual([key, want]);
      expect([key, b.processor.tasks.read(key)?.entity.value]).toEqual([key, want]);
    }
    // A command read again would be answered a second time (`duplicate`): one result each.
    const results = (await readTopic(kafka, d.resultsTopic, { isolation: 'read_committed' })).map((r) =>
      decodeCommandResult(Buffer.from(r.key!), Buffer.from(r.value!)),
    );
    expect(results.map((r) => r.outcome).sort()).toEqual(commands.map(() => 'applied'));
    expect(new Set(results.map((r) => r.commandId)).size).toBe(commands.length);
  });
});
