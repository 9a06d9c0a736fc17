import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandIdFor, type CommandResult } from '@state-relay/contracts';
import { StoreSchemaMismatchError } from '@state-relay/store';
import Database from 'better-sqlite3';
import { openScansDatabase } from '../src/scanner';
import { writeLegacyScansFile } from './fixtures/legacy-scans-file';

const SPEC = {
  condition: { field: 'status', op: 'eq', value: 'active' },
  action: { set: { status: 'dormant' } },
  options: { dryRun: false },
};
const TEMPLATE = { condition: { field: 'status', op: 'eq', value: 'active' }, action: { delete: true } };

/** Rows as the scanner before the split wrote them: a scan mid-chunk, its commands and a result. */
function seedLegacy(db: Database.Database, withSchedules: boolean): void {
  db.prepare(
    `INSERT INTO scans (id, status, phase, spec, as_of, cursor, inflight, scanned, matched, emitted, resolved, created_at, started_at)
     VALUES ('s1', 'running', 'walking', ?, 1000, 'k1', ?, 10, 3, 3, 1, 900, 950)`,
  ).run(JSON.stringify(SPEC), JSON.stringify({ toKey: 'k4', walked: 5, matched: 2, commands: 2, sent: 0 }));
  db.prepare(`INSERT INTO scans (id, status, spec, as_of, created_at) VALUES ('s2', 'pending', ?, 2000, 1900)`).run(
    JSON.stringify(SPEC),
  );
  const command = db.prepare('INSERT INTO scan_commands (scan_id, key, expected_version) VALUES (?, ?, ?)');
  command.run('s1', 'k1', null);
  command.run('s1', 'k2', 7);
  command.run('s1', 'k3', null);
  db.prepare(
    `INSERT INTO results (scan_id, key, command_id, outcome, reason, version, processed_at)
     VALUES ('s1', 'k1', ?, 'applied', NULL, 2, 960)`,
  ).run(commandIdFor('s1', 'k1'));
  db.prepare(`INSERT INTO scan_outcomes (scan_id, outcome, n) VALUES ('s1', 'applied', 1)`).run();
  if (!withSchedules) return;
  db.prepare(
    `INSERT INTO schedules (id, name, interval, cron, time_zone, template, paused, created_at, last_run_at)
     VALUES ('h1', 'hourly', 'PT1H', NULL, 'UTC', ?, 1, 800, 850)`,
  ).run(JSON.stringify(TEMPLATE));
  db.prepare(
    `INSERT INTO schedule_runs (schedule_id, scan_id, due_at, started_at, missed) VALUES ('h1', 's2', 840, 850, 2)`,
  ).run();
}

const result = (key: string, outcome: CommandResult['outcome']): CommandResult =>
  ({ scanId: 's1', key, commandId: commandIdFor('s1', key), outcome, processedAt: 970 }) as CommandResult;

describe('scans.sqlite written before the stores were split', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'scans-database-'));
    path = join(dir, 'scans.sqlite');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('opens a version 2 file, brings it to version 3 (idempotency keys) and keeps its scans, commands, results and schedules', () => {
    const legacy = writeLegacyScansFile(path);
    seedLegacy(legacy, true);
    legacy.close();

    const database = openScansDatabase(path);
    try {
      const { scans, schedules } = database;
      expect(database.file.db.pragma('user_version', { simple: true })).toBe(3);
      expect(database.file.db.prepare('SELECT count(*) AS n FROM idempotency_keys').get()).toEqual({ n: 0 });
      expect(scans.count()).toBe(2);
      expect(scans.list(10, 0).map((s) => s.id)).toEqual(['s2', 's1']);
      expect(scans.next()!.id).toBe('s1'); // the running one first
      expect(scans.get('s1')).toMatchObject({
        status: 'running',
        phase: 'walking',
        spec: SPEC,
        cursor: 'k1',
        inflight: { toKey: 'k4', walked: 5, matched: 2, commands: 2, sent: 0 },
        emitted: 3,
        resolved: 1,
        startedAt: 950,
      });
      expect(scans.outcomeCounts('s1')).toMatchObject({ applied: 1, condition_false: 0 });
      expect(scans.commands.countResults('s1')).toEqual(scans.outcomeCounts('s1'));
      // The inflight chunk re-sent on resume: the commands recorded after the cursor.
      expect(scans.commands.chunk('s1', 'k1', 'k4')).toEqual([{ key: 'k2', expectedVersion: 7 }, { key: 'k3' }]);

      expect(schedules.list()).toEqual([
        {
          id: 'h1',
          name: 'hourly',
          interval: 'PT1H',
          cron: null,
          timeZone: 'UTC',
          template: TEMPLATE,
          paused: true,
          createdAt: 800,
          lastRunAt: 850,
        },
      ]);
      expect(schedules.runs('h1', 10)).toEqual([
        { scheduleId: 'h1', scanId: 's2', dueAt: 840, startedAt: 850, missed: 2 },
      ]);

      // And it goes on working: a second result of k1 changes nothing, a first one of k2 counts.
      expect(scans.recordResults([result('k1', 'condition_false'), result('k2', 'applied')])).toHaveLength(1);
      expect(scans.get('s1')!.resolved).toBe(2);
      expect(scans.outcomeCounts('s1')).toMatchObject({ applied: 2, condition_false: 0 });
    } finally {
      database.close();
    }
  });

  it('brings a version 1 file (no schedules yet) up to version 3, keeping its scans', () => {
    const legacy = writeLegacyScansFile(path, 1);
    seedLegacy(legacy, false);
    legacy.close();

    const database = openScansDatabase(path);
    try {
      expect(database.file.db.pragma('user_version', { simple: true })).toBe(3);
      expect(database.scans.get('s1')).toMatchObject({ status: 'running', cursor: 'k1', resolved: 1 });
      expect(database.schedules.list()).toEqual([]);
      const created = database.schedules.create({
        id: 'h2',
        name: 'daily',
        interval: 'P1D',
        cron: null,
        timeZone: 'UTC',
        template: TEMPLATE,
        createdAt: 3000,
      });
      expect(created).toMatchObject({ id: 'h2', paused: false, lastRunAt: null });
    } finally {
      database.close();
    }
  });

  it('writes the same schema as before, plus the idempotency keys: the legacy code opens a file the new stores created', () => {
    openScansDatabase(path).close();
    const legacy = writeLegacyScansFile(path); // nothing to migrate: the file is at version 3
    try {
      expect(legacy.pragma('user_version', { simple: true })).toBe(3);
      const all = (sql: Database.Database) =>
        sql
          .prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
          .all() as Array<{ name: string }>;
      expect(all(legacy).filter((t) => t.name.includes('idempotency_keys')).length).toBeGreaterThan(0);
      const tables = (sql: Database.Database) => all(sql).filter((t) => !t.name.includes('idempotency_keys'));
      const reference = writeLegacyScansFile(join(dir, 'reference.sqlite'));
      try {
        expect(tables(legacy)).toEqual(tables(reference));
      } finally {
        reference.close();
      }
    } finally {
      legacy.close();
    }
  });

  it('refuses a file of a newer version', () => {
    const newer = new Database(path);
    newer.pragma('user_version = 4');
    newer.close();
    expect(() => openScansDatabase(path)).toThrow(StoreSchemaMismatchError);
  });
});
