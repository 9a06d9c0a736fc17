import { kafkaClient, testBrokers, waitUntil } from '@state-relay/testkit';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { demoEvents, newDeployment, ProcessorProcess, produceEvents, waitCaughtUp } from '../../processor/test/harness';
import { InProcessScanner } from './scanner-harness';

describe('schedules against a real broker and the real processor', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('a short-interval schedule produces successive scans that complete, each linked to the schedule', async () => {
    const kafka = kafkaClient(testBrokers());
    const d = newDeployment(testBrokers(), 3);
    const proc = new ProcessorProcess(d);
    cleanups.push(async () => {
      await proc.kill();
      proc.cleanup();
    });
    await proc.start();
    await proc.waitReady();
    await produceEvents(kafka, d.eventsTopic, demoEvents(200, 3, 7));
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    const scanner = await new InProcessScanner().start(d, { SCHEDULE_MIN_INTERVAL_MS: '2000' });
    cleanups.push(() => scanner.stop());
    const created = await scanner.api.call('POST', '/schedules', {
      name: 'every two seconds',
      interval: 'PT2S',
      template: { ...DORMANCY_SWEEP, options: { dryRun: true } },
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;

    type Run = { scanId: string; status: string; dueAt: string; startedAt: string; counts: { scanned: number } };
    const runs = await waitUntil(
      async () => {
        const res = await scanner.api.call('GET', `/schedules/${id}`);
        const done = (res.json.lastRuns as Run[]).filter((r) => r.status === 'completed');
        return done.length >= 2 && done;
      },
      { timeoutMs: 60_000, intervalMs: 250, message: 'two completed scheduled runs' },
    );
    expect(new Set(runs.map((r) => r.scanId)).size).toBe(runs.length);
    for (const run of runs) {
      expect(run.counts.scanned).toBe(200);
      const scan = await scanner.api.get(run.scanId);
      expect(scan).toMatchObject({ status: 'completed', asOf: run.startedAt, options: { dryRun: true } });
    }
    // Runs are due an interval apart (anchored, no drift); each starts once due, never early.
    // Start times themselves follow the scheduler's 1 s tick, so they can be closer.
    const sorted = [...runs].sort((a, b) => Date.parse(a.dueAt) - Date.parse(b.dueAt));
    const due = sorted.map((r) => Date.parse(r.dueAt));
    expect(due[1]! - due[0]!).toBeGreaterThanOrEqual(2_000);
    expect((due[1]! - due[0]!) % 2_000).toBe(0);
    for (const r of sorted) expect(Date.parse(r.startedAt)).toBeGreaterThanOrEqual(Date.parse(r.dueAt));
    await scanner.api.call('PATCH', `/schedules/${id}`, { paused: true });
  });
});
