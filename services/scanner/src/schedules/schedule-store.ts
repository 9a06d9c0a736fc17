import type { SqliteFile } from '@state-relay/store';
import type { ScanOptions } from '../scans/scan';

/**
 * The tables of this store in scans.sqlite (the file's version 2): schedules and the runs that
 * link each schedule to the scans it created. Idempotent: the file's schema runs it on a file of
 * any older version (see openScansDatabase).
 */
export const SCHEDULE_TABLES = `
  CREATE TABLE IF NOT EXISTS schedules (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,   -- creation order, for listing
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    interval TEXT,                           -- exactly one of interval and cron
    cron TEXT,
    time_zone TEXT NOT NULL,
    template TEXT NOT NULL,                  -- JSON {condition, action, options?}, relative times kept
    paused INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,             -- the anchor of interval runs
    last_run_at INTEGER                      -- the last plan with due > 0 (ran or skipped), or resume time
  );
  CREATE TABLE IF NOT EXISTS schedule_runs (
    schedule_id TEXT NOT NULL,
    scan_id TEXT NOT NULL,
    due_at INTEGER NOT NULL,                 -- the latest due time this run stands for
    started_at INTEGER NOT NULL,             -- when the scheduler created the scan (its asOf)
    missed INTEGER NOT NULL,                 -- due times folded into this run
    PRIMARY KEY (schedule_id, started_at, scan_id)
  ) WITHOUT ROWID;`;

export interface ScheduleTemplate {
  condition: unknown;
  action: unknown;
  options?: ScanOptions;
}

/** A schedule as persisted. Times are epoch ms. */
export interface ScheduleRecord {
  id: string;
  name: string;
  interval: string | null;
  cron: string | null;
  timeZone: string;
  template: ScheduleTemplate;
  paused: boolean;
  createdAt: number;
  lastRunAt: number | null;
}

export interface ScheduleRun {
  scheduleId: string;
  scanId: string;
  dueAt: number;
  startedAt: number;
  missed: number;
}

interface ScheduleRow {
  id: string;
  name: string;
  interval: string | null;
  cron: string | null;
  time_zone: string;
  template: string;
  paused: number;
  created_at: number;
  last_run_at: number | null;
}

interface RunRow {
  schedule_id: string;
  scan_id: string;
  due_at: number;
  started_at: number;
  missed: number;
}

export type NewSchedule = Omit<ScheduleRecord, 'paused' | 'lastRunAt'>;

/** Schedules in the scanner's own SQLite, on the connection its ScanStore uses (see openScansDatabase). */
export class ScheduleStore {
  private readonly stmt;
  private readonly recordPlanTx: (id: string, now: number, run: ScheduleRun | undefined) => void;
  private readonly startRunTx: (id: string, now: number, createScan: () => ScheduleRun) => ScheduleRun;
  private readonly deleteTx: (id: string) => boolean;

  constructor(file: SqliteFile) {
    const db = file.db;
    this.stmt = {
      insert: db.prepare(
        `INSERT INTO schedules (id, name, interval, cron, time_zone, template, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      get: db.prepare<[string], ScheduleRow>('SELECT * FROM schedules WHERE id = ?'),
      list: db.prepare<[], ScheduleRow>('SELECT * FROM schedules ORDER BY seq'),
      rename: db.prepare('UPDATE schedules SET name = ? WHERE id = ?'),
      pause: db.prepare('UPDATE schedules SET paused = 1 WHERE id = ?'),
      // Resuming stores the resume time as the last run: the paused time is not made up.
      resume: db.prepare(
        'UPDATE schedules SET paused = 0, last_run_at = max(coalesce(last_run_at, 0), ?) WHERE id = ? AND paused = 1',
      ),
      lastRun: db.prepare('UPDATE schedules SET last_run_at = ? WHERE id = ?'),
      insertRun: db.prepare(
        'INSERT INTO schedule_runs (schedule_id, scan_id, due_at, started_at, missed) VALUES (?, ?, ?, ?, ?)',
      ),
      runs: db.prepare<[string, number], RunRow>(
        'SELECT * FROM schedule_runs WHERE schedule_id = ? ORDER BY started_at DESC, scan_id DESC LIMIT ?',
      ),
      delete: db.prepare('DELETE FROM schedules WHERE id = ?'),
      deleteRuns: db.prepare('DELETE FROM schedule_runs WHERE schedule_id = ?'),
    };
    this.recordPlanTx = db.transaction((id: string, now: number, run: ScheduleRun | undefined) => {
      if (run) this.stmt.insertRun.run(run.scheduleId, run.scanId, run.dueAt, run.startedAt, run.missed);
      this.stmt.lastRun.run(now, id);
    });
    this.startRunTx = db.transaction((id: string, now: number, createScan: () => ScheduleRun) => {
      const run = createScan();
      this.stmt.insertRun.run(run.scheduleId, run.scanId, run.dueAt, run.startedAt, run.missed);
      this.stmt.lastRun.run(now, id);
      return run;
    });
    this.deleteTx = db.transaction((id: string) => {
      this.stmt.deleteRuns.run(id);
      return this.stmt.delete.run(id).changes > 0;
    });
  }

  create(s: NewSchedule): ScheduleRecord {
    this.stmt.insert.run(s.id, s.name, s.interval, s.cron, s.timeZone, JSON.stringify(s.template), s.createdAt);
    return this.get(s.id)!;
  }

  get(id: string): ScheduleRecord | undefined {
    const row = this.stmt.get.get(id);
    return row === undefined ? undefined : toSchedule(row);
  }

  /** Oldest first. */
  list(): ScheduleRecord[] {
    return this.stmt.list.all().map(toSchedule);
  }

  rename(id: string, name: string): void {
    this.stmt.rename.run(name, id);
  }

  setPaused(id: string, paused: boolean, at: number): void {
    if (paused) this.stmt.pause.run(id);
    else this.stmt.resume.run(at, id);
  }

  /** After a plan with due > 0: lastRunAt = now, and the run's link if it started one, together. */
  recordPlan(id: string, now: number, run?: ScheduleRun): void {
    this.recordPlanTx(id, now, run);
  }

  /**
   * Starts a run in one SQLite transaction: `createScan` (synchronous, on this same connection: see
   * openScansDatabase) inserts the scan, then the run's link and lastRunAt = now. A crash leaves both
   * or neither, so an occurrence starts once; if `createScan` throws, nothing is recorded.
   */
  startRun(id: string, now: number, createScan: () => ScheduleRun): ScheduleRun {
    return this.startRunTx(id, now, createScan);
  }

  /** Newest first. */
  runs(id: string, limit: number): ScheduleRun[] {
    return this.stmt.runs.all(id, limit).map((r) => ({
      scheduleId: r.schedule_id,
      scanId: r.scan_id,
      dueAt: r.due_at,
      startedAt: r.started_at,
      missed: r.missed,
    }));
  }

  /** Deletes the schedule and its run links; the scans stay. False if there was none. */
  delete(id: string): boolean {
    return this.deleteTx(id);
  }
}

function toSchedule(r: ScheduleRow): ScheduleRecord {
  return {
    id: r.id,
    name: r.name,
    interval: r.interval,
    cron: r.cron,
    timeZone: r.time_zone,
    template: JSON.parse(r.template) as ScheduleTemplate,
    paused: r.paused === 1,
    createdAt: r.created_at,
    lastRunAt: r.last_run_at,
  };
}
