import { coPartitionedAssigner } from '@state-relay/kafka-runtime';
import { kafkaClient, testBrokers } from '@state-relay/testkit';
import type { Consumer, Kafka } from 'kafkajs';
import { demoEvents, newDeployment, produceEvents, ProcessorProcess, waitCaughtUp, type Deployment } from './harness';

// Issue 31, item 9: two live processes with one INSTANCE_ID (a misconfiguration, or a cloned
// STATE_DIR) would fence each other's instance producer on every start, forever.
describe('one INSTANCE_ID, two processes (EXACTLY_ONCE=v2, real broker)', () => {
  let kafka: Kafka;
  const running: ProcessorProcess[] = [];
  const env = { EXACTLY_ONCE: 'v2', INSTANCE_ID: 'x' };
  beforeAll(() => {
    kafka = kafkaClient(testBrokers());
  });
  afterEach(async () => {
    for (const p of running.splice(0)) {
      await p.kill();
      p.cleanup();
    }
  });

  function processor(d: Deployment, stateDir?: string): ProcessorProcess {
    const p = new ProcessorProcess(d, stateDir);
    running.push(p);
    return p;
  }

  async function exitWithin(p: ProcessorProcess, ms: number): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`still running after ${ms} ms:\n${p.output}`)), ms);
    });
    return Promise.race([p.exitCode(), late]).finally(() => clearTimeout(timer));
  }

  const committed = (p: ProcessorProcess) => p.metric('processor_instance_transactions_total', 'outcome="committed"');
  const fenced = (p: ProcessorProcess) => p.metric('processor_instance_transactions_total', 'outcome="fenced"');

  async function memberIds(groupId: string): Promise<string[]> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { groups } = await admin.describeGroups([groupId]);
      return groups[0]!.members.map((m) => m.memberId);
    } finally {
      await admin.disconnect();
    }
  }

  it('a second process with a live instance’s INSTANCE_ID refuses to start, and the first is never fenced', async () => {
    const d = newDeployment(testBrokers(), 2);
    const a = await processor(d).start(env);
    await a.waitReady();
    await produceEvents(kafka, d.eventsTopic, demoEvents(50, 4, 1));
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    const [holder] = await memberIds(d.appId);

    const b = await processor(d).start(env); // its own STATE_DIR: only the id is shared
    const code = await exitWithin(b, 60_000);
    expect(code).toBe(1);
    expect(b.output).toContain('INSTANCE_ID_IN_USE');
    expect(b.output).toMatch(/INSTANCE_ID \\?"x\\?" is in use by another live process/);
    expect(b.output).toContain(`member ${holder}`);
    expect(b.output).toContain('Give each instance its own INSTANCE_ID');

    // A still commits, after B's attempt, with the producer it started with.
    const before = await committed(a);
    await produceEvents(kafka, d.eventsTopic, demoEvents(50, 4, 2));
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    expect(await committed(a)).toBeGreaterThan(before);
    expect(await fenced(a)).toBe(0);
    expect(a.output).not.toContain('the instance producer was fenced');
    expect(await memberIds(d.appId)).toEqual([holder]);
  });

  it('a member the group’s leader finds carrying a live member’s INSTANCE_ID stops with the same error', async () => {
    const d = newDeployment(testBrokers(), 2);
    const a = await processor(d).start(env);
    await a.waitReady();
    // A member that slipped past the start check (both started at once) and started earlier than A:
    // it keeps the id, so the leader gives A nothing.
    const earlier = coPartitionedAssigner({
      identity: { instanceId: 'x', startedAt: 0, host: 'the-other-host', sessionTimeoutMs: 10_000 },
    });
    const other: Consumer = kafka.consumer({ groupId: d.appId, partitionAssigners: [earlier], sessionTimeout: 10_000 });
    try {
      await other.connect();
      await other.subscribe({ topics: [d.eventsTopic, d.commandsTopic] });
      await other.run({ eachBatch: async () => undefined });
      const code = await exitWithin(a, 90_000);
      expect(code).toBe(1);
      expect(a.output).toContain('INSTANCE_ID_IN_USE');
      expect(a.output).toContain('host the-other-host');
      expect(a.output).not.toContain('the instance producer was fenced');
    } finally {
      await other.disconnect();
    }
  });

  it('a process restarted with the same INSTANCE_ID after a clean stop starts at once', async () => {
    const d = newDeployment(testBrokers(), 2);
    const a = await processor(d).start(env);
    await a.waitReady();
    expect(await a.stop()).toBe(0); // it left the group

    const again = await processor(d, a.stateDir).start({ ...env, LOG_LEVEL: 'info' });
    await again.waitReady(30_000);
    expect(again.output).not.toContain('waiting out its session timeout');
    await produceEvents(kafka, d.eventsTopic, demoEvents(20, 2, 3));
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    expect(await committed(again)).toBeGreaterThan(0);
  });

  it('a process killed and restarted with the same INSTANCE_ID starts once its old member’s session has timed out', async () => {
    const d = newDeployment(testBrokers(), 2);
    const a = await processor(d).start(env);
    await a.waitReady();
    await a.kill(); // its member stays listed until SESSION_TIMEOUT_MS (10 s here)

    const again = await processor(d, a.stateDir).start({ ...env, LOG_LEVEL: 'info' });
    await again.waitReady(60_000);
    expect(again.output).toContain('waiting out its session timeout');
    expect(again.output).not.toContain('INSTANCE_ID_IN_USE');
    await produceEvents(kafka, d.eventsTopic, demoEvents(20, 2, 4));
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    expect(await committed(again)).toBeGreaterThan(0);
  });
});
