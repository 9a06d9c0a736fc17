import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import pino from 'pino';
import { ScanEngine } from '../src/scans/scan-engine';
import { EngineScanService } from '../src/scans/scan-service';
import { StoreScheduleService } from '../src/schedules/schedule-service';
import { Scheduler } from '../src/schedules/scheduler';
import { tempStores } from './schedule-fakes';

// The built scheduler (dist) in a child process; `bash scripts/setup.sh` or `tsc -b` builds it.
const FIXTURE = join(__dirname, 'fixtures/scheduled-run-child.js');
const HOUR = 3_600_000;

/** Starts the fixture on `scansPath`; resolves once it has inserted the run's scan, then SIGKILLs it. */
async function killAfterScanInsert(scansPath: string): Promise<{ scanId: string; signal: NodeJS.Signals | null }> {
  const child = spawn(process.execPath, [FIXTURE, scansPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  const scanId = await new Promise<string>((resolve, reject) => {
    const onData = (b: Buffer) => {
      output += b.toString();
      const m = /inserted (\S+)\n/.exec(output);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(() => reject(new Error(`the fixture exited before inserting a scan:\n${output}`)));
  });
  child.kill('SIGKILL');
  return { scanId, signal: await exited };
}

describe('a scanner killed between a scheduled run’s scan and its occurrence', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanups.splice(0).reverse()) c();
  });

  it('leaves neither behind, and the restarted scheduler starts that occurrence once', async () => {
    // A schedule created 90 minutes ago with an hourly interval: one occurrence is due.
    const createdAt = Date.now() - 1.5 * HOUR;
    const first = tempStores();
    const { id } = new StoreScheduleService({
      store: first.schedules,
      scans: { get: () => ({}) as never },
      knownDomainActions: ['mark_dormant'],
      minIntervalMs: 60_000,
      now: () => createdAt,
    }).create({ name: 'hourly', interval: 'PT1H', template: { ...DORMANCY_SWEEP, options: { dryRun: true } } });
    first.close(false);

    const killed = await killAfterScanInsert(join(first.dir, 'scans.sqlite'));
    expect(killed.signal).toBe('SIGKILL');

    // Restart: the same file, the real scheduler and scan service, as a restarted scanner has them.
    const restarted = tempStores(first.dir);
    cleanups.push(() => restarted.close());
    const db = restarted.db;
    const scans = () => db.prepare('SELECT id FROM scans').pluck().all() as string[];
    const runs = () =>
      db.prepare('SELECT scan_id AS scanId, due_at AS dueAt FROM schedule_runs').all() as Array<{
        scanId: string;
        dueAt: number;
      }>;
    expect(scans()).not.toContain(killed.scanId); // the insert died with its uncommitted transaction
    expect(scans()).toEqual([]);
    expect(runs()).toEqual([]);
    expect(restarted.schedules.get(id)!.lastRunAt).toBeNull();

    const logger = pino({ level: 'silent' });
    const engine = new ScanEngine({
      store: restarted.scans,
      logger,
      knownDomainActions: ['mark_dormant'],
    } as unknown as ConstructorParameters<typeof ScanEngine>[0]); // create() needs no more; never started
    const service = new EngineScanService(engine, restarted.scans, { lag: () => [] });
    const scheduler = new Scheduler({ store: restarted.schedules, scans: service, logger });
    scheduler.tick();
    scheduler.tick();
    expect(scans()).toHaveLength(1);
    expect(runs()).toEqual([{ scanId: scans()[0], dueAt: createdAt + HOUR }]);
  }, 60_000); // a child process loads the built scanner: seconds on a loaded machine
});
