import { mkdtempSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountsDomain } from '@state-relay/accounts';
import { accountsOracle } from '@state-relay/accounts/testing';
import { commandIdFor, decodeCommandResult, encodeCommand, type UpdateCommand } from '@state-relay/contracts';
import { TaskStore } from '@state-relay/store';
import { kafkaClient, readTopic, testBrokers, waitUntil } from '@state-relay/testkit';
import type { Kafka } from 'kafkajs';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { createProcessorMetrics } from '../src/metrics';
import type { ProcessingExtension } from '../src/extension';
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
import { loadConfig as loadScannerConfig } from '../../scanner/src/config';
import { createScannerMetrics } from '../../scanner/src/metrics';
import { Scanner } from '../../scanner/src/scanner';
import { scannerEnv } from '../../scanner/test/scanner-harness';

// The task lifecycle against a real broker, in this process: a store that fails right after a
// Kafka commit, and a key deleted while its task lived elsewhere whose tombstone compaction
// removed before the task came back.

const silent = pino({ level: process.env.STATE_RELAY_TEST_LOG_LEVEL ?? 'silent' });

function processorFor(
  d: Deployment,
  stateDir: string,
  openStore?: (dir: string, task: number) => TaskStore,
  extension?: ProcessingExtension,
  logger: pino.Logger = silent,
) {
  const config = loadConfig({
    ...deploymentEnv(d),
    STATE_DIR: stateDir,
    SESSION_TIMEOUT_MS: '6000',
  });
  const metrics = createProcessorMetrics();
  const processor = new Processor({
    config,
    domain: accountsDomain,
    logger,
    metrics,
    ...(openStore ? { openStore } : {}),
    ...(extension ? { extension } : {}),
  });
  return { processor, metrics };
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
    action: { set: { flagged: true } },
    issuedAt: asOf,
  };
}

async function produceCommands(kafka: Kafka, topic: string, commands: UpdateCommand[]): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({ topic, messages: commands.map((c) => ({ key: c.key, value: encodeCommand(c) })) });
  await producer.disconnect();
}

describe('task lifecycle against a real broker', () => {
  let kafka: Kafka;
  const dirs: string[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  const tmp = (name: string) => {
    const dir = mkdtempSync(join(tmpdir(), `${name}-`));
    dirs.push(dir);
    return dir;
  };
  beforeAll(() => {
    kafka = kafkaClient(testBrokers());
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('a SQLite failure right after a Kafka commit, with the other input queued, loses no update', async () => {
    const d = newDeployment(testBrokers(), 2);
    let armed = false;
    let injected = 0;
    const openStore = (dir: string, task: number) => {
      const store = TaskStore.open({ dir, task });
      const commit = store.commit.bind(store);
      // Only the processor's own commits carry syncedAt (restore chunks do not): fail one of those.
      store.commit = (changes, checkpoint, syncedAt, inputs) => {
        if (armed && syncedAt !== undefined) {
          armed = false;
          injected++;
          throw new Error('disk I/O error (injected)');
        }
        commit(changes, checkpoint, syncedAt, inputs);
      };
      return store;
    };
    const { processor, metrics } = processorFor(d, tmp('sqlite-fail'), openStore);
    cleanups.push(() => processor.stop());
    await processor.start();
    await ready(processor);

    const first = demoEvents(200, 3, 21);
    await produceEvents(kafka, d.eventsTopic, first);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    // Commands on the first accounts and events on new ones, interleaved, with the failure armed.
    const keys = [...accountsOracle(first).keys()].sort();
    const commands = keys.slice(0, 120).map((k) => setFlag('scan-sqlite', k));
    const second = demoEvents(150, 2, 22).map(({ key, event }) => ({ key: `late-${key}`, event }));
    armed = true;
    await Promise.all([produceCommands(kafka, d.commandsTopic, commands), produceEvents(kafka, d.eventsTopic, second)]);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    await waitCaughtUp(kafka, d.appId, d.commandsTopic);
    await ready(processor);

    expect(injected).toBe(1);
    expect((await metrics.taskFailures.get()).values.find((v) => v.labels.kind === 'store')?.value).toBe(1);
    const oracle = accountsOracle([...first, ...second]);
    const flagged = new Set(commands.map((c) => c.key));
    const state = await changelogState(kafka, d.changelogTopic);
    expect(state.size).toBe(oracle.size);
    for (const [key, value] of oracle) {
      const want = flagged.has(key) ? { ...value, flagged: true } : value;
      expect([key, state.get(key)?.value]).toEqual([key, want]);
      // SQLite agrees with the changelog after the recovery (no update lost on the way).
      expect([key, processor.tasks.read(key)?.entity.value]).toEqual([key, want]);
    }
    const results = (await readTopic(kafka, d.resultsTopic, { isolation: 'read_committed' })).map((r) =>
      decodeCommandResult(Buffer.from(r.key!), Buffer.from(r.value!)),
    );
    const firsts = results.filter((r) => r.outcome !== 'duplicate');
    expect(firsts.map((r) => r.outcome)).toEqual(commands.map(() => 'applied'));
    expect(new Set(firsts.map((r) => r.commandId)).size).toBe(commands.length);
  });

  it('a consumer kafkajs gives up on is replaced in this process: nothing lost, nothing applied twice', async () => {
    const d = newDeployment(testBrokers(), 2);
    let armed = false;
    const extension: ProcessingExtension = {
      afterBatch: () => {
        if (!armed) return;
        armed = false;
        // kafkajs bails out of its fetch loop on this error name and emits CRASH with
        // restart: false, as it does for KafkaJSNoBrokerAvailableError during a broker restart.
        const err = new Error('no fetcher left (injected)');
        err.name = 'KafkaJSNotImplemented';
        throw err;
      },
    };
    const { processor, metrics } = processorFor(d, tmp('replaced'), undefined, extension);
    cleanups.push(() => processor.stop());
    await processor.start();
    await ready(processor);
    const first = demoEvents(150, 2, 31);
    await produceEvents(kafka, d.eventsTopic, first);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    armed = true;
    const keys = [...accountsOracle(first).keys()].sort();
    const commands = keys.slice(0, 80).map((k) => setFlag('scan-replaced', k));
    const second = demoEvents(120, 2, 32).map(({ key, event }) => ({ key: `late-${key}`, event }));
    await Promise.all([produceCommands(kafka, d.commandsTopic, commands), produceEvents(kafka, d.eventsTopic, second)]);
    await waitUntil(async () => (await metrics.consumerReplacements.get()).values.length > 0, {
      timeoutMs: 30_000,
      message: 'the consumer to be replaced',
    });
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    await waitCaughtUp(kafka, d.appId, d.commandsTopic);
    await ready(processor);

    expect(armed).toBe(false);
    expect((await metrics.consumerReplacements.get()).values.map((v) => [v.labels.reason, v.value])).toEqual([
      ['crashed', 1],
    ]);
    const oracle = accountsOracle([...first, ...second]);
    const flagged = new Set(commands.map((c) => c.key));
    const state = await changelogState(kafka, d.changelogTopic);
    expect(state.size).toBe(oracle.size);
    for (const [key, value] of oracle) {
      const want = flagged.has(key) ? { ...value, flagged: true } : value;
      // balances move with every event: a batch folded twice or skipped shows here
      expect([key, state.get(key)?.value]).toEqual([key, want]);
    }
    const results = (await readTopic(kafka, d.resultsTopic, { isolation: 'read_committed' })).map((r) =>
      decodeCommandResult(Buffer.from(r.key!), Buffer.from(r.value!)),
    );
    expect(results.map((r) => r.outcome)).toEqual(commands.map(() => 'applied'));
  });

  it('a task store of the first format is rebuilt from the changelog, never misread; re-sent commands stay duplicates', async () => {
    const d = newDeployment(testBrokers(), 1);
    const dir = tmp('old-format');
    const first = processorFor(d, dir).processor;
    await first.start();
    await ready(first);
    const seeded = demoEvents(40, 2, 41);
    await produceEvents(kafka, d.eventsTopic, seeded);
    const keys = [...accountsOracle(seeded).keys()].sort();
    const commands = keys.slice(0, 10).map((k) => setFlag('scan-old-format', k));
    await produceCommands(kafka, d.commandsTopic, commands);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    await waitCaughtUp(kafka, d.appId, d.commandsTopic);
    const end = await changelogState(kafka, d.changelogTopic);
    expect(end.size).toBe(keys.length);
    await first.stop();

    // The file an older release would have left: its own columns, a wrong row, a checkpoint at the end.
    const path = join(dir, 'task-0.sqlite');
    rmSync(path, { force: true });
    const raw = new Database(path);
    raw.exec(`CREATE TABLE entities (key TEXT PRIMARY KEY, version INTEGER NOT NULL, value TEXT NOT NULL, command_ids TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE meta (name TEXT PRIMARY KEY, value) WITHOUT ROWID;
      PRAGMA user_version = 1;`);
    raw.prepare('INSERT INTO entities VALUES (?, 99, \'{"status":"forged"}\', \'[]\')').run(keys[1]!);
    raw.prepare("INSERT INTO meta VALUES ('changelog_offset', ?)").run(10_000);
    raw.close();

    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const { processor, metrics } = processorFor(d, dir, undefined, undefined, logger);
    cleanups.push(() => processor.stop());
    await processor.start();
    await ready(processor);
    expect(lines.some((l) => l.includes('written in an older format') && l.includes('"from":1'))).toBe(true);
    for (const [key, entity] of end) {
      expect([key, processor.tasks.read(key)?.entity]).toEqual([key, entity]);
    }

    // The digests restored from the changelog still know every command: each re-send is a duplicate.
    await produceCommands(kafka, d.commandsTopic, commands);
    await waitCaughtUp(kafka, d.appId, d.commandsTopic);
    const results = (await readTopic(kafka, d.resultsTopic, { isolation: 'read_committed' })).map((r) =>
      decodeCommandResult(Buffer.from(r.key!), Buffer.from(r.value!)),
    );
    expect(results.map((r) => r.outcome)).toEqual([
      ...commands.map(() => 'applied'),
      ...commands.map(() => 'duplicate'),
    ]);
    expect((await metrics.commands.get()).values.find((v) => v.labels.outcome === 'duplicate')?.value).toBe(10);
  });

  it('a key deleted while its task lived elsewhere stays deleted after compaction removed the tombstone', async () => {
    const d = newDeployment(testBrokers(), 1);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: d.eventsTopic, numPartitions: 1 },
        { topic: d.commandsTopic, numPartitions: 1 },
        {
          topic: d.changelogTopic,
          numPartitions: 1,
          configEntries: [
            { name: 'cleanup.policy', value: 'compact' },
            { name: 'delete.retention.ms', value: '1000' },
            { name: 'segment.ms', value: '500' },
            { name: 'min.cleanable.dirty.ratio', value: '0.01' },
            { name: 'min.compaction.lag.ms', value: '0' },
          ],
        },
      ],
    });
    await admin.disconnect();

    // Instance A and the scanner's replica both see the account, then stop (their files stay).
    const dirA = tmp('owner-a');
    const a1 = processorFor(d, dirA).processor;
    await a1.start();
    await ready(a1);
    const seeded = demoEvents(20, 2, 5);
    await produceEvents(kafka, d.eventsTopic, seeded);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    const victim = [...accountsOracle(seeded).keys()].sort()[0]!;
    expect(a1.tasks.read(victim)).toBeDefined();
    const scannerDir = tmp('scanner');
    const scannerConfig = loadScannerConfig(scannerEnv(d, scannerDir, 0));
    const s1 = new Scanner({ config: scannerConfig, logger: silent, metrics: createScannerMetrics() });
    await s1.start();
    await waitUntil(() => s1.replica.get(victim) !== undefined, {
      timeoutMs: 60_000,
      message: 'the replica to hold it',
    });
    await s1.stop();
    await a1.stop();

    // Instance B owns the task meanwhile: the account is deleted, and compaction removes
    // first its value and then, after delete.retention.ms, its tombstone.
    const b = processorFor(d, tmp('owner-b')).processor;
    cleanups.push(() => b.stop());
    await b.start();
    await ready(b);
    await produceCommands(kafka, d.commandsTopic, [
      { ...setFlag('scan-delete', victim), commandId: commandIdFor('scan-delete', victim), action: { delete: true } },
    ]);
    await waitCaughtUp(kafka, d.appId, d.commandsTopic);
    expect(b.tasks.read(victim)).toBeUndefined();
    let filler = 0;
    const rolling = setInterval(() => {
      // Appends roll segments (segment.ms) so the cleaner can reach the tombstone.
      void produceEvents(kafka, d.eventsTopic, [
        { key: `filler-${filler++ % 5}`, event: { type: 'signed_up', at: Date.UTC(2026, 9, 1), data: {} } },
      ]).catch(() => undefined);
    }, 300);
    try {
      await waitUntil(
        async () => {
          const records = await readTopic(kafka, d.changelogTopic, { isolation: 'read_committed' });
          return !records.some((r) => r.key === victim);
        },
        { timeoutMs: 150_000, intervalMs: 2_000, message: `compaction to remove ${victim} and its tombstone` },
      );
    } finally {
      clearInterval(rolling);
    }
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    await b.stop();

    // A gets the task back with its old file; the scanner starts on its old replica.
    const a2 = processorFor(d, dirA).processor;
    cleanups.push(() => a2.stop());
    await a2.start();
    await ready(a2);
    const s2 = new Scanner({ config: scannerConfig, logger: silent, metrics: createScannerMetrics() });
    cleanups.push(() => s2.stop());
    await s2.start();
    await waitUntil(() => s2.replica.get(`filler-0`) !== undefined, {
      timeoutMs: 60_000,
      message: 'the replica to catch up',
    });

    expect(a2.tasks.read(victim)).toBeUndefined();
    expect(s2.replica.get(victim)).toBeUndefined();
    const others = [...accountsOracle(seeded)].filter(([k]) => k !== victim);
    for (const [key, value] of others) {
      expect([key, a2.tasks.read(key)?.entity.value]).toEqual([key, value]);
      expect([key, s2.replica.get(key)?.value]).toEqual([key, value]);
    }
    expect((await changelogState(kafka, d.changelogTopic)).has(victim)).toBe(false);
  });
});
