import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { accountsOracle } from '@state-relay/accounts/testing';
import { kafkaClient, testBrokers } from '@state-relay/testkit';
import { evaluateCondition } from '@state-relay/rules';
import type { Kafka } from 'kafkajs';
import {
  changelogState,
  demoEvents,
  newDeployment,
  ProcessorProcess,
  produceEvents,
  waitCaughtUp,
} from '../../processor/test/harness';
import { InProcessScanner } from './scanner-harness';

const AS_OF = Date.UTC(2026, 10, 1);
const ACCOUNTS = 500;

describe('large commands against a real broker and the real processor', () => {
  let kafka: Kafka;
  const cleanups: Array<() => Promise<void> | void> = [];

  beforeAll(() => {
    kafka = kafkaClient(testBrokers());
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('a scan setting a 60 KB value on 150 keys completes: no request breaks max.message.bytes, every command gets its result', async () => {
    const d = newDeployment(testBrokers(), 3);
    const proc = new ProcessorProcess(d);
    cleanups.push(async () => {
      await proc.kill();
      proc.cleanup();
    });
    await proc.start();
    await proc.waitReady();
    const events = demoEvents(ACCOUNTS, 3, 60);
    await produceEvents(kafka, d.eventsTopic, events);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    const idle = [...accountsOracle(events)]
      .filter(([, value]) => evaluateCondition(DORMANCY_SWEEP.condition, value, { asOf: AS_OF }))
      .map(([key]) => key);
    expect(idle.length).toBeGreaterThanOrEqual(120);

    const scanner = new InProcessScanner();
    cleanups.push(() => scanner.stop());
    const { api } = await scanner.start(d);
    const note = 'n'.repeat(60_000);
    const created = await api.create({
      condition: DORMANCY_SWEEP.condition,
      action: { set: { note } },
      asOf: new Date(AS_OF).toISOString(),
    });
    const done = await api.finished(created.id);
    expect({ status: done.status, error: done.error }).toEqual({ status: 'completed', error: null });
    expect(done.counts).toMatchObject({ matched: idle.length, emitted: idle.length, pending: 0 });
    expect(done.counts.results.applied).toBe(idle.length);

    await waitCaughtUp(kafka, d.appId, d.commandsTopic);
    const after = await changelogState(kafka, d.changelogTopic);
    expect(idle.filter((key) => after.get(key)?.value.note !== note)).toEqual([]);
  });
});
