import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountsDomain } from '@state-relay/accounts';
import { accountsOracle } from '@state-relay/accounts/testing';
import { TaskStore } from '@state-relay/store';
import { kafkaClient, testBrokers, waitUntil } from '@state-relay/testkit';
import type { Kafka } from 'kafkajs';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { createProcessorMetrics, type ProcessorMetrics } from '../src/metrics';
import { Processor } from '../src/processor';
import { demoEvents, deploymentEnv, newDeployment, produceEvents, waitCaughtUp, type Deployment } from './harness';

// Issue 33: a rolling restart moves only the restarted instance's tasks, and back. The leader's
// sticky assignment keeps tasks with their owners and gives a returning instance the tasks it has
// stores for; the store it kept restores only what the changelog gained meanwhile.

const silent = pino({ level: process.env.STATE_RELAY_TEST_LOG_LEVEL ?? 'silent' });
const PARTITIONS = 6;

interface Instance {
  processor: Processor;
  metrics: ProcessorMetrics;
}

function instance(d: Deployment, stateDir: string, instanceId: string): Instance {
  const config = loadConfig({
    ...deploymentEnv(d),
    STATE_DIR: stateDir,
    SESSION_TIMEOUT_MS: '6000',
    INSTANCE_ID: instanceId,
  });
  const metrics = createProcessorMetrics();
  return { processor: new Processor({ config, domain: accountsDomain, logger: silent, metrics }), metrics };
}

const restored = async (i: Instance) => (await i.metrics.restoredRecords.get()).values.reduce((n, v) => n + v.value, 0);

/** Both instances ready, and between them owning every task once. */
async function settled(...instances: Processor[]): Promise<void> {
  await waitUntil(
    () =>
      instances.every((p) => p.isReady) &&
      instances
        .flatMap((p) => p.tasks.owned)
        .sort((a, b) => a - b)
        .join() === [...Array(PARTITIONS).keys()].join(),
    { timeoutMs: 90_000, message: 'every task owned once and RUNNING' },
  );
}

describe('sticky assignment and kept stores (issue 33)', () => {
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

  it('a restarted instance gets back exactly its tasks and restores only the changelog’s tail', async () => {
    const d = newDeployment(testBrokers(), PARTITIONS);
    const dirA = tmp('sticky-a');
    const dirB = tmp('sticky-b');
    const a1 = instance(d, dirA, 'proc-a');
    const b = instance(d, dirB, 'proc-b');
    running.push(b.processor);
    await a1.processor.start();
    await b.processor.start();
    await settled(a1.processor, b.processor);
    const ownedA = a1.processor.tasks.owned;
    const ownedB = b.processor.tasks.owned;
    expect([ownedA.length, ownedB.length]).toEqual([3, 3]);

    const first = demoEvents(300, 4, 33);
    await produceEvents(kafka, d.eventsTopic, first);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    // proc-a stops (its files stay); proc-b runs every task meanwhile, restoring proc-a's.
    await a1.processor.stop();
    await waitUntil(() => b.processor.isReady && b.processor.tasks.owned.length === PARTITIONS, {
      timeoutMs: 90_000,
      message: 'proc-b to run every task',
    });
    const second = demoEvents(40, 2, 34); // a few changes while proc-a is away
    await produceEvents(kafka, d.eventsTopic, second);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    // proc-a comes back as a new member with the same instance id and its stores.
    const a2 = instance(d, dirA, 'proc-a');
    running.push(a2.processor);
    await a2.processor.start();
    await settled(a2.processor, b.processor);
    expect({ a: a2.processor.tasks.owned, b: b.processor.tasks.owned }).toEqual({ a: ownedA, b: ownedB });
    // Its kept stores needed only what proc-b added to their changelog partitions meanwhile.
    const tail = await restored(a2);
    const firstRestoreOfB = await restored(b); // proc-b rebuilt proc-a's three tasks from scratch
    expect(tail).toBeLessThan(firstRestoreOfB);
    // proc-b keeps the store files of the tasks it gave back (STATE_CLEANUP_DELAY_MS, 10 minutes).
    expect(TaskStore.tasksIn(dirB)).toEqual([...Array(PARTITIONS).keys()]);

    // The state is the oracle's, read through whichever instance owns each key.
    const oracle = accountsOracle([...first, ...second]);
    for (const [key, value] of oracle) {
      const found = a2.processor.tasks.read(key) ?? b.processor.tasks.read(key);
      expect({ key, value: found?.entity.value }).toEqual({ key, value });
    }
  }, 300_000);
});
