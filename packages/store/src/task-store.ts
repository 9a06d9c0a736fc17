import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Statement } from 'better-sqlite3';
import {
  assertAfterKey,
  assertEntity,
  assertKey,
  assertLimit,
  decodeCommandIds,
  decodeValue,
  encodeJson,
} from './codec';
import { StoreInvalidArgumentError } from './errors';
import { formatOffset, parseOffset } from './offset';
import { SqliteFile, type Schema } from './sqlite-file';
import type { StoredEntity } from './types';

const SCHEMA: Schema = {
  version: 1,
  ddl: `
    CREATE TABLE IF NOT EXISTS entities (
      key TEXT PRIMARY KEY,
      version INTEGER NOT NULL,
      value TEXT NOT NULL,       -- JSON of StoredEntity.value
      command_ids TEXT NOT NULL  -- JSON array of StoredEntity.commandIds
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value) WITHOUT ROWID;`,
};

/** The next changelog offset to read on restore; absent until the first commit. */
const CHECKPOINT = 'changelog_offset';
/**
 * Epoch ms when the rows last matched the changelog's end (a commit of the owner, or a restore
 * that reached the end). A store that has not matched the end for longer than the changelog's
 * delete.retention.ms may miss tombstones compaction has since removed: it must be rebuilt.
 */
const SYNCED_AT = 'synced_at';

export interface TaskStoreOptions {
  dir: string;
  task: number;
  /** How long a write waits for another connection's lock; default 5000. */
  busyTimeoutMs?: number;
}

type EntityRow = [key: string, version: number, value: string, commandIds: string];

/**
 * The processor's store for one task: `<dir>/task-<n>.sqlite`. It is a materialised cache
 * of the task's changelog partition plus the changelog offset it reflects; rows and that
 * offset only ever change together, in one SQLite transaction.
 */
export class TaskStore {
  private readonly file: SqliteFile;
  private readonly stmt: {
    get: Statement<[string], EntityRow>;
    put: Statement<[string, number, string, string]>;
    del: Statement<[string]>;
    count: Statement<[], number>;
    first: Statement<[number], EntityRow>;
    after: Statement<[string, number], EntityRow>;
    getCheckpoint: Statement<[], bigint>;
    setCheckpoint: Statement<[bigint]>;
    clearRows: Statement<[]>;
    clearCheckpoint: Statement<[]>;
    getSyncedAt: Statement<[], number>;
    setSyncedAt: Statement<[number]>;
  };
  private readonly commitTx: (
    changes: Iterable<[string, StoredEntity | null]>,
    checkpoint: bigint,
    syncedAt: number | undefined,
  ) => void;
  private readonly wipeTx: () => void;

  private constructor(file: SqliteFile) {
    this.file = file;
    const db = file.db;
    const cols = 'key, version, value, command_ids';
    this.stmt = {
      get: db.prepare<[string], EntityRow>(`SELECT ${cols} FROM entities WHERE key = ?`).raw(),
      put: db.prepare(
        `INSERT INTO entities (${cols}) VALUES (?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET version = excluded.version, value = excluded.value, command_ids = excluded.command_ids`,
      ),
      del: db.prepare('DELETE FROM entities WHERE key = ?'),
      count: db.prepare<[], number>('SELECT count(*) FROM entities').pluck(),
      first: db.prepare<[number], EntityRow>(`SELECT ${cols} FROM entities ORDER BY key LIMIT ?`).raw(),
      after: db
        .prepare<[string, number], EntityRow>(`SELECT ${cols} FROM entities WHERE key > ? ORDER BY key LIMIT ?`)
        .raw(),
      getCheckpoint: db
        .prepare<[], bigint>(`SELECT value FROM meta WHERE name = '${CHECKPOINT}'`)
        .pluck()
        .safeIntegers(),
      setCheckpoint: db.prepare(
        `INSERT INTO meta (name, value) VALUES ('${CHECKPOINT}', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      ),
      clearRows: db.prepare('DELETE FROM entities'),
      clearCheckpoint: db.prepare(`DELETE FROM meta WHERE name IN ('${CHECKPOINT}', '${SYNCED_AT}')`),
      getSyncedAt: db.prepare<[], number>(`SELECT value FROM meta WHERE name = '${SYNCED_AT}'`).pluck(),
      setSyncedAt: db.prepare(
        `INSERT INTO meta (name, value) VALUES ('${SYNCED_AT}', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      ),
    };
    this.commitTx = db.transaction(
      (changes: Iterable<[string, StoredEntity | null]>, checkpoint: bigint, syncedAt: number | undefined) => {
        const { put, del } = this.stmt;
        for (const [key, entity] of changes) {
          assertKey(key);
          if (entity === null) {
            del.run(key);
          } else {
            assertEntity(key, entity);
            put.run(key, entity.version, encodeJson(key, entity.value), encodeJson(key, entity.commandIds));
          }
        }
        this.stmt.setCheckpoint.run(checkpoint);
        if (syncedAt !== undefined) this.stmt.setSyncedAt.run(syncedAt);
      },
    );
    this.wipeTx = db.transaction(() => {
      this.stmt.clearRows.run();
      this.stmt.clearCheckpoint.run();
    });
  }

  static open({ dir, task, busyTimeoutMs }: TaskStoreOptions): TaskStore {
    const path = TaskStore.pathOf(dir, task);
    mkdirSync(dir, { recursive: true });
    return new TaskStore(SqliteFile.open(path, SCHEMA, busyTimeoutMs));
  }

  /**
   * Deletes a task's store file (with its WAL and shared-memory files); the store must be
   * closed. What an instance does with a task it no longer owns: its copy would go stale.
   */
  static remove({ dir, task }: Pick<TaskStoreOptions, 'dir' | 'task'>): void {
    const path = TaskStore.pathOf(dir, task);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  }

  private static pathOf(dir: string, task: number): string {
    if (typeof dir !== 'string' || dir === '') throw new StoreInvalidArgumentError('dir must be a non-empty path');
    if (!Number.isSafeInteger(task) || task < 0) {
      throw new StoreInvalidArgumentError(`task must be a non-negative integer, got ${String(task)}`);
    }
    return join(dir, `task-${task}.sqlite`);
  }

  get path(): string {
    return this.file.path;
  }

  get(key: string): StoredEntity | undefined {
    assertKey(key);
    const row = this.file.run('get', () => this.stmt.get.get(key));
    return row === undefined ? undefined : decodeEntity(row);
  }

  /** The next changelog offset to read on restore, or null if nothing was ever committed. */
  checkpoint(): string | null {
    const value = this.file.run('checkpoint', () => this.stmt.getCheckpoint.get());
    return value === undefined ? null : formatOffset(value);
  }

  /** When the rows last matched the changelog's end (epoch ms), or null if never recorded. */
  syncedAt(): number | null {
    const value = this.file.run('syncedAt', () => this.stmt.getSyncedAt.get());
    return typeof value === 'number' ? value : null;
  }

  /**
   * Apply puts (entity) and deletes (null) in iteration order and move the checkpoint, all
   * in one transaction: if anything throws (SQLite, a bad entity, the iterator itself),
   * neither rows nor checkpoint change and the error is rethrown. `syncedAt` is given when
   * the checkpoint is the changelog's end (see syncedAt()).
   */
  commit(changes: Iterable<[string, StoredEntity | null]>, checkpoint: string, syncedAt?: number): void {
    const next = parseOffset(checkpoint, 'checkpoint');
    if (syncedAt !== undefined && !Number.isSafeInteger(syncedAt)) {
      throw new StoreInvalidArgumentError(`syncedAt must be an integer epoch ms, got ${String(syncedAt)}`);
    }
    this.file.run('commit', () => this.commitTx(changes, next, syncedAt));
  }

  /** Records that the rows match the changelog's end as of `at` (a restore reached it). */
  markSynced(at: number): void {
    if (!Number.isSafeInteger(at))
      throw new StoreInvalidArgumentError(`at must be an integer epoch ms, got ${String(at)}`);
    this.file.run('markSynced', () => this.stmt.setSyncedAt.run(at));
  }

  count(): number {
    return this.file.run('count', () => this.stmt.count.get() ?? 0);
  }

  /** Database pages plus the WAL file, in bytes. */
  sizeBytes(): number {
    return this.file.sizeBytes();
  }

  /** Up to `limit` entities after `afterKey` (null: from the start), in key order (UTF-8 byte order). */
  keysAfter(afterKey: string | null, limit: number): Array<[string, StoredEntity]> {
    assertAfterKey(afterKey);
    assertLimit(limit);
    const rows = this.file.run('keysAfter', () =>
      afterKey === null ? this.stmt.first.all(limit) : this.stmt.after.all(afterKey, limit),
    );
    return rows.map((row) => [row[0], decodeEntity(row)]);
  }

  /** Drop every row, the checkpoint and the sync stamp, e.g. when the checkpoint is ahead of a recreated changelog. */
  wipe(): void {
    this.file.run('wipe', () => this.wipeTx());
  }

  /** Checkpoint the WAL into the file (TRUNCATE) and close. Idempotent. */
  close(): void {
    this.file.close();
  }
}

function decodeEntity([key, version, value, commandIds]: EntityRow): StoredEntity {
  // decodeValue checked it is a JSON object; JSON text can only hold JSON values.
  return {
    version,
    value: decodeValue(key, value) as StoredEntity['value'],
    commandIds: decodeCommandIds(key, commandIds),
  };
}
