import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountsDomain } from '@state-relay/accounts';
import { encodeStoredEntity } from '@state-relay/contracts';
import { TaskStore } from '@state-relay/store';
import { kafkaClient, testBrokers, waitUntil } from '@state-relay/testkit';
import type { Kafka } from 'kafkajs';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { createProcessorMetrics } from '../src/metrics';
import { Processor } from '../src/processor';
import { changelogState, newDeployment, type Deployment, deploymentEnv } from './harness';

// A task's restore against a real broker, on a changelog the test writes itself: a rebuild
// interrupted half-way resumes, one task's failing store does not restart the others, and a
// changelog whose start moved past a checkpoint is rebuilt from its start.

const silent = pino({ level: process.env.STATE_RELAY_TEST_LOG_LEVEL ?? 'silent' });

type Changelog = Array<{ partition: number; key: string; value: Buffer | null }>;

function account(n: number, padding = 0): Buffer {
  return encodeStoredEntity({ version: n, value: { status: 'active', n, pad: 'x'.repeat(padding) }, seen: '' });
}

async function createTopics(kafka: Kafka, d: Deployment, changelogPolicy: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: d.eventsTopic, numPartitions: d.partitions },
        { topic: d.commandsTopic, numPartitions: d.partitions },
        {
          topic: d.changelogTopic,
          numPartitions: d.partitions,
          configEntries: [{ name: 'cleanup.policy', value: changelogPolicy }],
        },
      ],
    });
    await waitUntil(
      () =>
        admin.fetchTopicOffsets(d.changelogTopic).then(
          () => true,
          () => false,
        ),
      { timeoutMs: 30_000, message: 'the changelog leader' },
    );
  } finally {
    await admin.disconnect();
  }
}

/** Writes changelog records as an owner would (one produce request per 200: many record batches). */
async function writeChangelog(kafka: Kafka, topic: string, records: Changelog): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    for (let i = 0; i < records.length; i += 200) {
      await producer.send({
        topic,
        messages: records.slice(i, i + 200).map((r) => ({ partition: r.partition, key: r.key, value: r.value })),
      });
    }
  } finally {
    await producer.disconnect();
  }
}

function processorFor(
  d: Deployment,
  stateDir: string,
  openStore?: (dir: string, task: number) => TaskStore,
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
  });
  return { processor, metrics };
}

/** A store whose `n`-th restore batch (a commit without syncedAt) of task `task` throws, once. */
function failingRestoreBatch(task: number, n: number) {
  const state = { batches: 0, injected: 0 };
  const openStore = (dir: string, id: number) => {
    const store = TaskStore.open({ dir, task: id });
    const commit = store.commit.bind(store);
    store.commit = (changes, checkpoint, syncedAt) => {
      if (id === task && syncedAt === undefined && ++state.batches === n && state.injected === 0) {
        state.injected++;
        throw new Error('disk I/O error (injected)');
      }
      commit(changes, checkpoint, syncedAt);
    };
    return store;
  };
  return { state, openStore };
}

async function metricValue(
  metric: { get(): Promise<{ values: Array<{ value: number; labels: Record<string, unknown> }> }> },
  labels: Record<string, string> = {},
): Promise<number> {
  return (await metric.get()).values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((sum, v) => sum + v.value, 0);
}

describe('task restore against a real broker', () => {
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

  async function ready(processor: Processor, timeoutMs = 60_000): Promise<void> {
    await waitUntil(() => processor.isReady && processor.tasks.owned.length > 0, {
      timeoutMs,
      message: 'the processor to be ready',
    });
  }

  async function expectStateOfChangelog(processor: Processor, d: Deployment, written: Changelog): Promise<void> {
    const state = await changelogState(kafka, d.changelogTopic);
    for (const { key } of written) {
      expect([key, processor.tasks.read(key)?.entity]).toEqual([key, state.get(key)]);
    }
  }

  it('a rebuild that fails after its first batch resumes from its checkpoint, restoring every record once', async () => {
    const d = newDeployment(testBrokers(), 1);
    await createTopics(kafka, d, 'compact');
    // ~6 MB: more than one fetch of the restore (4 MiB per partition).
    const written: Changelog = Array.from({ length: 3_000 }, (_, i) => ({
      partition: 0,
      key: `acct-${i}`,
      value: account(i, 2_000),
    }));
    await writeChangelog(kafka, d.changelogTopic, written);

    const { state, openStore } = failingRestoreBatch(0, 2);
    const { processor, metrics } = processorFor(d, tmp('resume'), openStore);
    cleanups.push(() => processor.stop());
    await processor.start();
    await ready(processor);

    expect(state.injected).toBe(1);
    expect(await metricValue(metrics.taskFailures, { kind: 'store' })).toBe(1);
    // From 0 again, the second attempt would restore the first batch twice.
    expect(await metricValue(metrics.restoredRecords)).toBe(written.length);
    await expectStateOfChangelog(processor, d, written);
  });

  it("one task's store failing mid-restore fails that task only: the others run without restoring again", async () => {
    const d = newDeployment(testBrokers(), 3);
    await createTopics(kafka, d, 'compact');
    const written: Changelog = Array.from({ length: 900 }, (_, i) => ({
      partition: i % 3,
      key: `acct-${i}`,
      value: account(i, 500),
    }));
    await writeChangelog(kafka, d.changelogTopic, written);

    const { state, openStore } = failingRestoreBatch(1, 1);
    const { processor, metrics } = processorFor(d, tmp('isolated'), openStore);
    cleanups.push(() => processor.stop());
    await processor.start();
    await ready(processor);
    await waitUntil(() => processor.tasks.owned.length === 3 && processor.tasks.allRunning, {
      timeoutMs: 60_000,
      message: 'all three tasks to run',
    });

    expect(state.injected).toBe(1);
    expect(await metricValue(metrics.taskFailures)).toBe(1);
    expect(await metricValue(metrics.restoredRecords)).toBe(written.length);
    await expectStateOfChangelog(processor, d, written);
  });

  it('a changelog whose start moved past a checkpoint is rebuilt from its start; a new store starts there', async () => {
    const d = newDeployment(testBrokers(), 2);
    // DeleteRecords needs the delete policy; the records the test deletes stand for retention.
    await createTopics(kafka, d, 'compact,delete');
    const first: Changelog = Array.from({ length: 200 }, (_, i) => ({
      partition: i % 2,
      key: `acct-${i}`,
      value: account(1),
    }));
    await writeChangelog(kafka, d.changelogTopic, first);
    const dir = tmp('moved');
    const a = processorFor(d, dir).processor;
    await a.start();
    await ready(a);
    await waitUntil(() => a.tasks.owned.length === 2 && a.tasks.allRunning, { timeoutMs: 60_000 });
    expect(a.tasks.read('acct-0')?.entity.version).toBe(1);
    await a.stop();

    // While the instance is away: acct-0 is deleted and a few accounts change, then the log
    // start of both partitions moves past the stores' checkpoints (100), into the new records.
    const second: Changelog = [
      { partition: 0, key: 'acct-0', value: null },
      ...Array.from({ length: 40 }, (_, i) => ({ partition: i % 2, key: `acct-${i + 2}`, value: account(2) })),
    ];
    await writeChangelog(kafka, d.changelogTopic, second);
    const admin = kafka.admin();
    await admin.connect();
    // kafkajs's deleteTopicRecords finds leaders in metadata it does not load itself.
    await admin.fetchTopicMetadata({ topics: [d.changelogTopic] });
    await admin.deleteTopicRecords({
      topic: d.changelogTopic,
      partitions: [
        { partition: 0, offset: '105' },
        { partition: 1, offset: '105' },
      ],
    });
    const held = (await admin.fetchTopicOffsets(d.changelogTopic)).reduce(
      (n, o) => n + Number(o.high) - Number(o.low),
      0,
    );
    await admin.disconnect();
    rmSync(join(dir, 'task-1.sqlite'), { force: true }); // task 1 rebuilds from 0, below the log start

    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const { processor: b, metrics } = processorFor(d, dir, undefined, logger);
    cleanups.push(() => b.stop());
    await b.start();
    await waitUntil(() => b.tasks.owned.length === 2 && b.tasks.allRunning, {
      timeoutMs: 60_000,
      message: 'both tasks to run',
    });

    const wiped = lines.filter((l) => l.includes('no longer holds the store checkpoint'));
    expect(wiped.map((l) => (JSON.parse(l) as { task: number }).task)).toEqual([0]);
    expect(wiped.every((l) => l.includes('"level":40'))).toBe(true); // warn
    // Only what the changelog still holds, from its new start: 16 + 15 records.
    expect(held).toBe(31);
    expect(await metricValue(metrics.restoredRecords)).toBe(held);
    await expectStateOfChangelog(b, d, [...first, ...second]);
    expect(b.tasks.read('acct-0')).toBeUndefined();
    expect(b.tasks.read('acct-1')).toBeUndefined(); // its only record was below the log start
  });
});
