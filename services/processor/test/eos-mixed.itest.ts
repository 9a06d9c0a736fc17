import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountsDomain } from '@state-relay/accounts';
import { accountsOracle } from '@state-relay/accounts/testing';
import { encodeStoredEntity } from '@state-relay/contracts';
import {
  initTaskProducer,
  initTransactionalProducer,
  instanceTransactionalId,
  isFencedError,
} from '@state-relay/kafka-runtime';
import { kafkaClient, readTopic, testBrokers, waitUntil } from '@state-relay/testkit';
import type { Kafka, Producer, Transaction } from 'kafkajs';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { provisionTopics } from '../src/kafka/topics';
import { createProcessorMetrics } from '../src/metrics';
import { Processor } from '../src/processor';
import {
  changelogState,
  demoEvents,
  deploymentEnv,
  newDeployment,
  produceEvents,
  waitCaughtUp,
  type Deployment,
} from './harness';

// A group rolling from EXACTLY_ONCE=v1 to v2 (issue 31, item 3). A v1 instance commits with the
// per-task transactional id <APP_ID>-<task> and no group generation; one frozen mid-transaction
// (a "zombie") must not be able to commit once a v2 instance has taken the task.

const silent = pino({ level: process.env.STATE_RELAY_TEST_LOG_LEVEL ?? 'silent' });
const ZOMBIE_KEY = 'zombie-v1-key';
/** Where the zombie's transaction moves the events offset of task 0: far past anything produced. */
const ZOMBIE_OFFSET = '100000';

function processorOf(d: Deployment, stateDir: string, env: Record<string, string> = {}) {
  const config = loadConfig({ ...deploymentEnv(d), STATE_DIR: stateDir, SESSION_TIMEOUT_MS: '6000', ...env });
  return new Processor({ config, domain: accountsDomain, logger: silent, metrics: createProcessorMetrics() });
}

/**
 * A v1 task producer of task 0 (the id and settings v1 uses) with a transaction left open: a
 * changelog record on partition 0 and the events offset of task 0, committed without a generation.
 */
async function frozenV1Zombie(kafka: Kafka, d: Deployment): Promise<{ producer: Producer; tx: Transaction }> {
  const producer = await initTaskProducer({ kafka, appId: d.appId, task: 0, transactionTimeoutMs: 60_000 });
  return openZombieTransaction(producer, d, ZOMBIE_OFFSET);
}

/** The transaction a frozen instance left open on task 0: one changelog record and the events offset `offset`. */
async function openZombieTransaction(
  producer: Producer,
  d: Deployment,
  offset: string,
): Promise<{ producer: Producer; tx: Transaction }> {
  const tx = await producer.transaction();
  await tx.send({
    topic: d.changelogTopic,
    messages: [
      {
        key: ZOMBIE_KEY,
        partition: 0,
        value: encodeStoredEntity({ version: 1, value: { status: 'active', from: 'zombie' }, seen: '' }),
      },
    ],
  });
  await tx.sendOffsets({
    consumerGroupId: d.appId,
    topics: [{ topic: d.eventsTopic, partitions: [{ partition: 0, offset }] }],
  });
  return { producer, tx };
}

async function committedEventOffsets(kafka: Kafka, d: Deployment): Promise<Map<number, string>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [events] = await admin.fetchOffsets({ groupId: d.appId, topics: [d.eventsTopic] });
    return new Map(events!.partitions.map((p) => [p.partition, p.offset]));
  } finally {
    await admin.disconnect();
  }
}

async function eventEnds(kafka: Kafka, d: Deployment): Promise<Map<number, string>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return new Map((await admin.fetchTopicOffsets(d.eventsTopic)).map((o) => [o.partition, o.high]));
  } finally {
    await admin.disconnect();
  }
}

describe('a group mixing exactly-once v1 and v2 instances (real broker)', () => {
  let kafka: Kafka;
  const cleanups: Array<() => Promise<unknown>> = [];
  const dirs: string[] = [];
  const tmp = () => {
    const dir = mkdtempSync(join(tmpdir(), 'eos-mixed-'));
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

  /** The deployment's topics, and events before the zombie; returns them. */
  async function deployment(seed: number) {
    const d = newDeployment(testBrokers(), 2);
    const admin = kafka.admin();
    await admin.connect();
    await provisionTopics(admin, loadConfig({ ...deploymentEnv(d), STATE_DIR: tmp() }), silent).finally(() =>
      admin.disconnect(),
    );
    const before = demoEvents(60, 2, seed);
    await produceEvents(kafka, d.eventsTopic, before);
    return { d, before };
  }

  it("a v2 instance taking a task fences a frozen v1 instance's transaction: its commit fails as fenced, nothing of it is visible, and v2 processes normally", async () => {
    const { d, before } = await deployment(3101);
    const zombie = await frozenV1Zombie(kafka, d);
    cleanups.push(() => zombie.producer.disconnect());

    const processor = processorOf(d, tmp());
    cleanups.push(() => processor.stop());
    await processor.start();
    // Task 0 enters only after fencing <APP_ID>-0: the zombie's open transaction no longer holds its
    // offsets or changelog partition, so it reaches RUNNING well within the transaction timeout.
    await waitUntil(() => processor.isReady && processor.tasks.owned.length === 2, {
      timeoutMs: 30_000,
      message: 'the v2 processor to run both tasks',
    });

    const err: unknown = await zombie.tx.commit().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeDefined();
    expect(isFencedError(err)).toBe(true);
    expect(String((err as { type?: string }).type)).toMatch(/^(PRODUCER_FENCED|INVALID_PRODUCER_EPOCH)$/);

    const after = demoEvents(60, 2, 3102).map(({ key, event }) => ({ key: `late-${key}`, event }));
    await produceEvents(kafka, d.eventsTopic, after);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    // Nothing the zombie wrote is visible: not its record (read_committed), not its offset.
    const changelog = await readTopic(kafka, d.changelogTopic, { isolation: 'read_committed', timeoutMs: 30_000 });
    expect(changelog.filter((r) => r.key === ZOMBIE_KEY)).toEqual([]);
    expect(processor.tasks.read(ZOMBIE_KEY)).toBeUndefined();
    expect(await committedEventOffsets(kafka, d)).toEqual(await eventEnds(kafka, d));
    // And the v2 instance folded every event: changelog and store equal the oracle.
    const oracle = accountsOracle([...before, ...after]);
    const state = await changelogState(kafka, d.changelogTopic);
    expect(state.size).toBe(oracle.size);
    for (const [key, value] of oracle) {
      expect([key, state.get(key)?.value]).toEqual([key, value]);
      expect([key, processor.tasks.read(key)?.entity.value]).toEqual([key, value]);
    }
  });

  it('NOT fenced with EXACTLY_ONCE_LEGACY_FENCE=false (for deployments that never ran v1): the zombie commits after the v2 instance took the task', async () => {
    // What the fence prevents. The other task is not held back meanwhile (issue 31, item 5).
    const { d } = await deployment(3103);
    const zombie = await frozenV1Zombie(kafka, d);
    cleanups.push(() => zombie.producer.disconnect());

    const processor = processorOf(d, tmp(), { EXACTLY_ONCE_LEGACY_FENCE: 'false' });
    cleanups.push(() => processor.stop());
    await processor.start();
    await waitUntil(() => processor.tasks.stateOf(1) === 'RUNNING', {
      timeoutMs: 30_000,
      message: 'task 1 to run',
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(processor.tasks.stateOf(0)).toBe('RESTORING'); // waiting out the zombie's transaction

    await expect(zombie.tx.commit()).resolves.toBeUndefined();
    await waitUntil(() => processor.isReady, { timeoutMs: 30_000, message: 'task 0 to run' });
    // Its record is committed and restored into the v2 owner's store: an update from outside it.
    const changelog = await readTopic(kafka, d.changelogTopic, { isolation: 'read_committed', timeoutMs: 30_000 });
    expect(changelog.filter((r) => r.key === ZOMBIE_KEY)).toHaveLength(1);
    expect(processor.tasks.read(ZOMBIE_KEY)?.task).toBe(0);
  });

  it('a v1 task of this release taking a task from a frozen v2 instance waits out its transaction and restores what it committed', async () => {
    // The other way round (a roll back, or a task moving back to a v1 instance mid-roll): the v1
    // fence does not reach the v2 instance's id, so the v1 task reads its offsets stable and its
    // changelog end settled before it restores. Restoring to the end read at once would miss the
    // zombie's record while seeking past the offsets its commit moves.
    const { d } = await deployment(3105);
    const ends = await eventEnds(kafka, d);
    const producer = await initTransactionalProducer({
      kafka,
      transactionalId: instanceTransactionalId(d.appId, 'frozen-v2'),
      transactionTimeoutMs: 60_000,
    });
    const zombie = await openZombieTransaction(producer, d, ends.get(0)!);
    cleanups.push(() => producer.disconnect());

    const processor = processorOf(d, tmp(), { EXACTLY_ONCE: 'v1' });
    cleanups.push(() => processor.stop());
    await processor.start();
    await waitUntil(() => processor.tasks.stateOf(1) === 'RUNNING', { timeoutMs: 30_000, message: 'task 1 to run' });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(processor.tasks.stateOf(0)).toBe('RESTORING'); // waiting out the v2 zombie's transaction

    await zombie.tx.commit(); // the zombie thaws and commits: nothing of the v2 side fenced it
    await waitUntil(() => processor.isReady, { timeoutMs: 30_000, message: 'task 0 to run' });
    // Task 0 resumes at the zombie's offset with the zombie's record in its store: consistent.
    expect((await committedEventOffsets(kafka, d)).get(0)).toBe(ends.get(0));
    expect(processor.tasks.read(ZOMBIE_KEY)?.task).toBe(0);
  });
});
