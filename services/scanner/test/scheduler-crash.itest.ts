import { join } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { createTopics, kafkaClient, testBrokers, waitUntil } from '@state-relay/testkit';
import Database from 'better-sqlite3';
import { newDeployment } from '../../processor/test/harness';
import { ScannerProcess } from './scanner-harness';

const KILLS = 4;

/**
 * A real scanner process (built JS) running a one-second schedule is SIGKILLed again and again
 * while its runs start. Every occurrence must be started at most once: one scan per due time, and
 * no scan without its occurrence. The topics are created here; a dry run over the empty replica
 * needs no processor.
 */
describe('scheduled runs across kill -9 of the scanner', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('start each occurrence once: no due time twice, no scan without its run', async () => {
    const d = newDeployment(testBrokers(), 2);
    const admin = kafkaClient(testBrokers()).admin();
    await admin.connect();
    try {
      await createTopics(admin, [
        { topic: d.changelogTopic, partitions: d.partitions, compacted: true },
        { topic: d.commandsTopic, partitions: d.partitions },
        { topic: d.resultsTopic, partitions: d.partitions },
      ]);
    } finally {
      await admin.disconnect();
    }
    const env = { SCHEDULE_MIN_INTERVAL_MS: '1000' };
    let scanner = new ScannerProcess(d);
    const stateDir = scanner.stateDir;
    cleanups.push(() => scanner.cleanup());
    cleanups.push(() => scanner.kill());
    await scanner.start(env);
    const created = await scanner.api.call('POST', '/schedules', {
      name: 'every second',
      interval: 'PT1S',
      template: { ...DORMANCY_SWEEP, options: { dryRun: true } },
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;

    const latestRun = async () =>
      ((await scanner.api.call('GET', `/schedules/${id}`)).json.lastRuns as Array<{ scanId: string }>)[0]?.scanId;
    const aNewRun = async (before: string | undefined) =>
      waitUntil(async () => (await latestRun()) !== before, {
        timeoutMs: 60_000,
        intervalMs: 50,
        message: 'a scheduled run to start',
      });
    for (let i = 0; i < KILLS; i++) {
      // Kill while runs are starting: once a new one has started, after a random extra delay.
      await aNewRun(await latestRun());
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 1_000)));
      await scanner.kill();
      scanner = new ScannerProcess(d, stateDir);
      await scanner.start(env);
    }
    await aNewRun(await latestRun()); // the last restart runs the schedule on too
    expect(await scanner.stop()).toBe(0);

    const db = new Database(join(stateDir, 'scans.sqlite'), { readonly: true });
    try {
      const runs = db.prepare('SELECT scan_id AS scanId, due_at AS dueAt FROM schedule_runs').all() as Array<{
        scanId: string;
        dueAt: number;
      }>;
      const scans = db.prepare('SELECT id FROM scans').pluck().all() as string[];
      expect(runs.length).toBeGreaterThanOrEqual(KILLS);
      expect(new Set(runs.map((r) => r.dueAt)).size).toBe(runs.length); // no occurrence twice
      expect(new Set(runs.map((r) => r.scanId)).size).toBe(runs.length);
      expect([...scans].sort()).toEqual(runs.map((r) => r.scanId).sort()); // every scan is a run's
    } finally {
      db.close();
    }
  });
});
