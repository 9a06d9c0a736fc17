import { join } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import pino from 'pino';
import { createScannerMetrics } from '../src/metrics';
import { ScanEngine } from '../src/scans/scan-engine';
import { EngineScanService } from '../src/scans/scan-service';
import { StoreScheduleService } from '../src/schedules/schedule-service';
import { Scheduler } from '../src/schedules/scheduler';
import { FakeScanService, tempStores } from './schedule-fakes';

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const MIN = 60_000;

describe('Scheduler', () => {
  let stores: ReturnType<typeof tempStores>;
  let scans: FakeScanService;
  let now: number;
  let service: StoreScheduleService;
  let scheduler: Scheduler;

  const build = () => {
    service = new StoreScheduleService({
      store: stores.schedules,
      scans,
      knownDomainActions: ['mark_dormant'],
      minIntervalMs: MIN,
      now: () => now,
    });
    scheduler = new Scheduler({ store: stores.schedules, scans, logger: pino({ level: 'silent' }), now: () => now });
  };
  const tickAt = (t: number) => {
    now = t;
    scheduler.tick();
  };
  const everyMinute = () =>
    service.create({ name: 'dormancy', interval: 'PT1M', template: { ...DORMANCY_SWEEP, options: { dryRun: true } } });

  beforeEach(() => {
    stores = tempStores();
    scans = new FakeScanService();
    now = T0;
    build();
  });
  afterEach(() => {
    scheduler.stop();
    stores.close();
  });

  it('runs at each interval after creation, each run an ordinary scan of the template with asOf = the run time', () => {
    const { id } = everyMinute();
    tickAt(T0 + 30_000);
    expect(scans.created).toHaveLength(0);
    tickAt(T0 + MIN);
    expect(scans.created).toHaveLength(1);
    expect(scans.created[0]!.request).toEqual({ ...DORMANCY_SWEEP, options: { dryRun: true }, asOf: T0 + MIN });
    scans.finish('scan-1');
    tickAt(T0 + MIN + 1_000);
    expect(scans.created).toHaveLength(1);
    tickAt(T0 + 2 * MIN + 400);
    expect(scans.created.map((s) => s.request.asOf)).toEqual([T0 + MIN, T0 + 2 * MIN + 400]);

    const view = service.get(id);
    expect(view.lastRuns.map((r) => [r.scanId, r.dueAt, r.missed, r.status])).toEqual([
      ['scan-2', new Date(T0 + 2 * MIN).toISOString(), 0, 'pending'],
      ['scan-1', new Date(T0 + MIN).toISOString(), 0, 'completed'],
    ]);
    expect(view.lastRuns[1]!.counts).toMatchObject({ scanned: 10, matched: 3 });
    expect(view.nextRunAt).toBe(new Date(T0 + 3 * MIN).toISOString());
  });

  it('never starts a run while the previous scan is pending or running, and does not make skipped runs up', () => {
    const { id } = everyMinute();
    tickAt(T0 + MIN);
    tickAt(T0 + 2 * MIN);
    scans.finish('scan-1', 'running');
    tickAt(T0 + 3 * MIN);
    expect(scans.created).toHaveLength(1);
    scans.finish('scan-1');
    tickAt(T0 + 3 * MIN + 5_000);
    expect(scans.created).toHaveLength(1);
    tickAt(T0 + 4 * MIN);
    expect(scans.created).toHaveLength(2);
    expect(service.get(id).lastRuns).toHaveLength(2);
  });

  it('does not run a paused schedule, and resuming does not make up the paused runs', () => {
    const { id } = everyMinute();
    service.update(id, { paused: true });
    tickAt(T0 + 10 * MIN);
    expect(scans.created).toHaveLength(0);
    expect(service.get(id)).toMatchObject({ paused: true, nextRunAt: null });
    service.update(id, { paused: false });
    tickAt(T0 + 10 * MIN + 1_000);
    expect(scans.created).toHaveLength(0);
    tickAt(T0 + 11 * MIN);
    expect(scans.created).toHaveLength(1);
  });

  it('after downtime, runs once on start for all the runs it missed, never a burst', () => {
    const { id } = everyMinute();
    tickAt(T0 + MIN);
    scans.finish('scan-1');
    // The scanner stops; an hour later a new process opens the same file and starts its scheduler.
    stores.close(false);
    stores = tempStores(stores.dir);
    build();
    now = T0 + 61 * MIN + 30_000;
    scheduler.start();
    expect(scans.created).toHaveLength(2);
    tickAt(now + 1_000);
    tickAt(now + 1_000);
    expect(scans.created).toHaveLength(2);
    expect(service.get(id).lastRuns[0]).toMatchObject({
      scanId: 'scan-2',
      dueAt: new Date(T0 + 61 * MIN).toISOString(),
      missed: 59,
    });
  });

  it('follows a cron expression in the schedule’s time zone', () => {
    service.create({
      name: 'nightly',
      cron: '0 3 * * *',
      timeZone: 'Europe/Berlin',
      template: DORMANCY_SWEEP,
    });
    tickAt(Date.UTC(2026, 2, 2, 1, 59)); // 02:59 CET
    expect(scans.created).toHaveLength(0);
    tickAt(Date.UTC(2026, 2, 2, 2, 0)); // 03:00 CET
    expect(scans.created).toHaveLength(1);
  });

  it('keeps planning the other schedules when one cannot create its scan, and starts that one at the next tick', () => {
    const failing = everyMinute();
    const other = everyMinute();
    const create = scans.create.bind(scans);
    let first = true;
    scans.create = (r) => {
      if (first) {
        first = false;
        throw new Error('SQLITE_BUSY: database is locked');
      }
      return create(r);
    };
    tickAt(T0 + MIN);
    expect(scans.created).toHaveLength(1);
    expect(service.get(other.id).lastRuns).toHaveLength(1);
    // Nothing was recorded for the failed one: its occurrence is still due, and starts once.
    expect(service.get(failing.id)).toMatchObject({ lastRunAt: null, lastRuns: [] });
    tickAt(T0 + MIN + 1_000);
    tickAt(T0 + MIN + 2_000);
    expect(scans.created).toHaveLength(2);
    expect(service.get(failing.id).lastRuns).toMatchObject([{ dueAt: new Date(T0 + MIN).toISOString(), missed: 0 }]);
  });

  it('spends the due time of a template the rules reject at run time, and tries again at the next one', () => {
    // The schedule was accepted when `retired` was still a domain action; the scans no longer know it.
    const { id } = new StoreScheduleService({
      store: stores.schedules,
      scans,
      knownDomainActions: ['mark_dormant', 'retired'],
      minIntervalMs: MIN,
      now: () => now,
    }).create({ name: 'old', interval: 'PT1M', template: { ...DORMANCY_SWEEP, action: { domain: 'retired' } } });
    tickAt(T0 + MIN);
    tickAt(T0 + MIN + 1_000); // not retried every tick
    expect(scans.created).toHaveLength(0);
    expect(service.get(id)).toMatchObject({
      lastRunAt: new Date(T0 + MIN).toISOString(),
      nextRunAt: new Date(T0 + 2 * MIN).toISOString(),
      lastRuns: [],
    });
  });
});

/**
 * The scheduler over the real scans database and scan service, as the scanner wires them: one
 * SQLite connection for scans and schedules. A failure is injected in SQLite itself (a trigger),
 * on either side of the run, to show a run's scan and its occurrence commit together or not at all.
 */
describe('Scheduler over the real scans database', () => {
  let stores: ReturnType<typeof tempStores>;
  let now: number;
  let service: StoreScheduleService;
  let scheduler: Scheduler;

  beforeEach(() => {
    stores = tempStores();
    now = T0;
    const logger = pino({ level: 'silent' });
    const engine = new ScanEngine({
      store: stores.scans,
      replica: { chunk: () => ({ rows: [], lastKey: null, walked: 0 }), path: join(stores.dir, 'replica.sqlite') },
      replicaProgress: { currentEnds: async () => new Map(), waitFor: async () => undefined },
      sink: { send: async () => undefined },
      commandLag: { lag: async () => 0 },
      metrics: createScannerMetrics(),
      logger,
      chunkSize: 100,
      maxCommandLag: 1_000,
      replicaCatchUpTimeoutMs: 1_000,
      knownDomainActions: ['mark_dormant'],
      now: () => now,
    }); // never started: scans stay pending, which is all a scheduled run needs
    const scans = new EngineScanService(engine, stores.scans, { lag: () => [] }, () => now);
    service = new StoreScheduleService({
      store: stores.schedules,
      scans,
      knownDomainActions: ['mark_dormant'],
      minIntervalMs: MIN,
      now: () => now,
    });
    scheduler = new Scheduler({ store: stores.schedules, scans, logger, now: () => now });
  });
  afterEach(() => stores.close());

  const db = () => stores.db;
  const scanIds = () => db().prepare('SELECT id FROM scans ORDER BY seq').pluck().all() as string[];
  const runs = () =>
    db().prepare('SELECT scan_id AS scanId, due_at AS dueAt FROM schedule_runs ORDER BY due_at').all() as Array<{
      scanId: string;
      dueAt: number;
    }>;
  const failInserts = (table: string) =>
    db().exec(
      `CREATE TRIGGER fail_${table} BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`,
    );
  const healInserts = (table: string) => db().exec(`DROP TRIGGER fail_${table}`);
  const tickAt = (t: number) => {
    now = t;
    scheduler.tick();
  };

  it('creates no scan when the occurrence cannot be recorded, and the occurrence once when it can', () => {
    const { id } = service.create({ name: 'n', interval: 'PT1M', template: DORMANCY_SWEEP });
    failInserts('schedule_runs');
    tickAt(T0 + MIN);
    expect(scanIds()).toEqual([]); // the scan's insert was rolled back with the run's
    expect(service.get(id)).toMatchObject({ lastRunAt: null, lastRuns: [] });

    healInserts('schedule_runs');
    tickAt(T0 + MIN + 1_000);
    tickAt(T0 + MIN + 2_000);
    expect(runs()).toEqual([{ scanId: scanIds()[0], dueAt: T0 + MIN }]);
    expect(scanIds()).toHaveLength(1);
    expect(service.get(id)).toMatchObject({ lastRunAt: new Date(T0 + MIN + 1_000).toISOString() });
  });

  it('records no occurrence when the scan cannot be inserted, and runs it once when it can', () => {
    const { id } = service.create({ name: 'n', interval: 'PT1M', template: DORMANCY_SWEEP });
    failInserts('scans');
    tickAt(T0 + MIN);
    expect(runs()).toEqual([]);
    expect(service.get(id)).toMatchObject({ lastRunAt: null, lastRuns: [] });

    healInserts('scans');
    tickAt(T0 + MIN + 1_000);
    tickAt(T0 + MIN + 2_000);
    expect(scanIds()).toHaveLength(1);
    expect(runs()).toEqual([{ scanId: scanIds()[0], dueAt: T0 + MIN }]);
    expect(service.get(id).lastRuns).toMatchObject([{ scanId: scanIds()[0], status: 'pending', missed: 0 }]);
  });
});
