import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database, { type Statement } from 'better-sqlite3';
import { encodeStoredEntity, parseStoredEntity } from '@state-relay/contracts';
import { assertAfterKey, assertEntity, assertKey, assertLimit } from './codec';
import { StoreCorruptRowError, StoreInvalidArgumentError } from './errors';
import { formatOffset, parseOffset } from './offset';
import { SqliteFile, type Schema } from './sqlite-file';
import type { StoredEntity } from './types';

const SCHEMA: Schema = {
  // 2: a row holds the changelog record's bytes as they are (see DECISIONS.md, 'Rows are the changelog's bytes').
  version: 2,
  rebuildBelow: 2,
  drop: `DROP TABLE IF EXISTS entities; DELETE FROM meta;`,
  ddl: `
    CREATE TABLE IF NOT EXISTS entities (
      key TEXT PRIMARY KEY,
      record TEXT NOT NULL  -- the changelog value: JSON of StoredEntity
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value) WITHOUT ROWID;`,
};

/** The next changelog offset to read on restore; absent until the first commit. */
const CHECKPOINT = 'changelog_offset';
/**
 * Epoch ms when the rows last matched the changelog's end: older than delete.retention.ms, the
 * store is rebuilt (see DECISIONS.md, 'Rebuilt, not caught up, past delete.retention.ms').
 */
const SYNCED_AT = 'synced_at';
/**
 * `input_offset:<topic>`: the next offset of an input topic that the rows already reflect (from
 * the task's own commits and the changelog's input-positions headers). Only ever raised.
 */
const INPUT_OFFSET = 'input_offset:';
const INT64_MAX = 9223372036854775807n;
/**
 * Epoch ms when a rebuild from the changelog's start began; absent once a restore reached the end.
 * An interrupted rebuild may resume from its checkpoint while this is younger than delete.retention.ms.
 */
const REBUILD_STARTED_AT = 'rebuild_started_at';

export interface TaskStoreOptions {
  dir: string;
  task: number;
  /** How long a write waits for another connection's lock; default 5000. */
  busyTimeoutMs?: number;
}

type EntityRow = [key: string, record: string];

/** A change for commit(): the changelog record's bytes (as sent or fetched), an entity to encode, or null (delete). */
export type StoreChange = [key: string | Buffer, record: Buffer | StoredEntity | null];

/**
 * The processor's store for one task: `<dir>/task-<n>.sqlite`. It is a materialised cache
 * of the task's changelog partition plus the changelog offset it reflects; rows and that
 * offset only ever change together, in one SQLite transaction.
 */
export class TaskStore {
  private readonly file: SqliteFile;
  private readonly stmt: {
    get: Statement<[string], EntityRow>;
    put: Statement<[string | Buffer, Buffer, Buffer]>;
    del: Statement<[string | Buffer]>;
    count: Statement<[], number>;
    first: Statement<[number], EntityRow>;
    after: Statement<[string, number], EntityRow>;
    getCheckpoint: Statement<[], bigint>;
    setCheckpoint: Statement<[bigint]>;
    clearRows: Statement<[]>;
    clearCheckpoint: Statement<[]>;
    getSyncedAt: Statement<[], number>;
    setSyncedAt: Statement<[number]>;
    getInputs: Statement<[], [string, bigint]>;
    raiseInput: Statement<[string, bigint]>;
    clearInputs: Statement<[]>;
    getRebuildStartedAt: Statement<[], number>;
    begin: Statement<[]>;
    end: Statement<[]>;
    rollback: Statement<[]>;
    setRebuildStartedAt: Statement<[number]>;
    clearRebuildStartedAt: Statement<[]>;
  };
  private readonly commitTx: (
    changes: Iterable<StoreChange>,
    checkpoint: bigint,
    syncedAt: number | undefined,
    inputs: ReadonlyMap<string, bigint> | undefined,
  ) => void;
  private readonly wipeTx: (rebuildStartedAt: number | undefined) => void;
  private readonly markSyncedTx: (at: number) => void;

  private constructor(file: SqliteFile) {
    this.file = file;
    const db = file.db;
    const cols = 'key, record';
    this.stmt = {
      get: db.prepare<[string], EntityRow>(`SELECT ${cols} FROM entities WHERE key = ?`).raw(),
      // Bytes (kafkajs Buffers) stored as TEXT by CAST, with no decode in JavaScript; json_valid
      // refuses a record that is not JSON: the row is not written and commit throws.
      put: db.prepare(
        `INSERT INTO entities (${cols}) SELECT CAST(? AS TEXT), CAST(? AS TEXT) WHERE json_valid(CAST(? AS TEXT))
         ON CONFLICT (key) DO UPDATE SET record = excluded.record`,
      ),
      del: db.prepare('DELETE FROM entities WHERE key = CAST(? AS TEXT)'),
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
      clearCheckpoint: db.prepare(
        `DELETE FROM meta WHERE name IN ('${CHECKPOINT}', '${SYNCED_AT}', '${REBUILD_STARTED_AT}')`,
      ),
      getSyncedAt: db.prepare<[], number>(`SELECT value FROM meta WHERE name = '${SYNCED_AT}'`).pluck(),
      setSyncedAt: db.prepare(
        `INSERT INTO meta (name, value) VALUES ('${SYNCED_AT}', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      ),
      getInputs: db
        .prepare<[], [string, bigint]>(`SELECT name, value FROM meta WHERE name GLOB '${INPUT_OFFSET}*'`)
        .raw()
        .safeIntegers(),
      raiseInput: db.prepare(
        `INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)`,
      ),
      clearInputs: db.prepare(`DELETE FROM meta WHERE name GLOB '${INPUT_OFFSET}*'`),
      getRebuildStartedAt: db
        .prepare<[], number>(`SELECT value FROM meta WHERE name = '${REBUILD_STARTED_AT}'`)
        .pluck(),
      setRebuildStartedAt: db.prepare(
        `INSERT INTO meta (name, value) VALUES ('${REBUILD_STARTED_AT}', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      ),
      clearRebuildStartedAt: db.prepare(`DELETE FROM meta WHERE name = '${REBUILD_STARTED_AT}'`),
      // A deferred transaction takes its WAL snapshot at the first read and keeps it until COMMIT.
      begin: db.prepare('BEGIN DEFERRED'),
      end: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
    };
    this.commitTx = db.transaction(
      (
        changes: Iterable<StoreChange>,
        checkpoint: bigint,
        syncedAt: number | undefined,
        inputs: ReadonlyMap<string, bigint> | undefined,
      ) => {
        const { put, del } = this.stmt;
        for (const [key, record] of changes) {
          if (typeof key !== 'string' && !Buffer.isBuffer(key)) assertKey(key);
          if (record === null) {
            del.run(key);
            continue;
          }
          let bytes: Buffer;
          if (Buffer.isBuffer(record)) {
            bytes = record;
          } else {
            const name = typeof key === 'string' ? key : key.toString('utf8');
            assertEntity(name, record);
            bytes = encodeStoredEntity(record);
          }
          if (put.run(key, bytes, bytes).changes === 0) {
            throw new StoreCorruptRowError(String(key), new Error('the record is not JSON'));
          }
        }
        this.stmt.setCheckpoint.run(checkpoint);
        if (syncedAt !== undefined) this.stmt.setSyncedAt.run(syncedAt);
        for (const [topic, next] of inputs ?? []) this.stmt.raiseInput.run(`${INPUT_OFFSET}${topic}`, next);
      },
    );
    this.wipeTx = db.transaction((rebuildStartedAt: number | undefined) => {
      this.stmt.clearRows.run();
      this.stmt.clearCheckpoint.run();
      this.stmt.clearInputs.run();
      if (rebuildStartedAt !== undefined) this.stmt.setRebuildStartedAt.run(rebuildStartedAt);
    });
    this.markSyncedTx = db.transaction((at: number) => {
      this.stmt.setSyncedAt.run(at);
      this.stmt.clearRebuildStartedAt.run();
    });
  }

  static open({ dir, task, busyTimeoutMs }: TaskStoreOptions): TaskStore {
    const path = TaskStore.pathOf(dir, task);
    mkdirSync(dir, { recursive: true });
    return new TaskStore(SqliteFile.open(path, SCHEMA, busyTimeoutMs));
  }

  /**
   * The schema version of a file written by older code whose rows were dropped when it was
   * opened (it has no checkpoint now: restore rebuilds it from the changelog), or null.
   */
  get rebuiltFrom(): number | null {
    return this.file.rebuiltFrom;
  }

  /**
   * Deletes a task's store file (with its WAL and shared-memory files); the store must be
   * closed. What an instance does with a task it no longer owns: its copy would go stale.
   */
  static remove({ dir, task }: Pick<TaskStoreOptions, 'dir' | 'task'>): void {
    const path = TaskStore.pathOf(dir, task);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  }

  /** The tasks with a store file in `dir` (none when `dir` does not exist), ascending. */
  static tasksIn(dir: string): number[] {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const tasks: number[] = [];
    for (const name of names) {
      const m = /^task-(\d{1,9})\.sqlite$/.exec(name);
      if (m) tasks.push(Number(m[1]));
    }
    return tasks.sort((a, b) => a - b);
  }

  /**
   * The changelog offset a closed (or another connection's) store file reflects, read without
   * opening it as a store (no migration, no write): -1 when it has none or cannot be read.
   */
  static peekCheckpoint({ dir, task }: Pick<TaskStoreOptions, 'dir' | 'task'>): number {
    let db: Database.Database | undefined;
    try {
      db = new Database(TaskStore.pathOf(dir, task), { readonly: true, fileMustExist: true });
      const value: unknown = db.prepare(`SELECT value FROM meta WHERE name = '${CHECKPOINT}'`).pluck().get();
      const offset = typeof value === 'number' || typeof value === 'bigint' ? Number(value) : -1;
      return Number.isSafeInteger(offset) && offset >= 0 ? offset : -1;
    } catch {
      return -1;
    } finally {
      db?.close();
    }
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

  /**
   * Runs `fn` (synchronous, reads only) inside one SQLite read transaction: its reads share one
   * WAL snapshot, instead of each get() opening and closing its own (a point read costs several
   * times less inside one). The transaction ends when `fn` returns or throws, so it is never held
   * across an await; a function that returns a promise is refused (StoreInvalidArgumentError) once
   * its synchronous part has run. Inside another transaction (or a nested reading) `fn` just runs.
   * A failure to begin or end the transaction throws a StoreError; when `fn` closed the store, the
   * transaction went with it.
   */
  reading<T>(fn: () => T): T {
    const db = this.file.db;
    if (db.inTransaction) return this.notAsync(fn());
    this.file.run('reading', () => this.stmt.begin.run());
    let result: T;
    try {
      result = fn();
    } catch (err) {
      this.endReading(true);
      throw err;
    }
    this.endReading(false);
    return this.notAsync(result);
  }

  private endReading(failed: boolean): void {
    if (this.file.isClosed || !this.file.db.inTransaction) return;
    if (failed) {
      try {
        this.stmt.rollback.run();
      } catch {
        // fn's error is the one to report; a rollback that fails leaves nothing written
      }
      return;
    }
    this.file.run('reading', () => this.stmt.end.run());
  }

  private notAsync<T>(result: T): T {
    if (typeof (result as { then?: unknown } | null)?.then === 'function') {
      throw new StoreInvalidArgumentError(
        'reading() takes a synchronous function: a snapshot is not held across an await',
      );
    }
    return result;
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

  /** When the rebuild in progress began (epoch ms; see wipe), or null when no rebuild is unfinished. */
  rebuildStartedAt(): number | null {
    const value = this.file.run('rebuildStartedAt', () => this.stmt.getRebuildStartedAt.get());
    return typeof value === 'number' ? value : null;
  }

  /**
   * Input topic -> the next offset the rows already reflect (see commit's `inputs`); empty
   * when never recorded, and after a wipe or a rebuild (they go with the rows).
   */
  inputPositions(): Map<string, bigint> {
    const rows = this.file.run('inputPositions', () => this.stmt.getInputs.all());
    return new Map(rows.map(([name, value]) => [name.slice(INPUT_OFFSET.length), BigInt(value)]));
  }

  /**
   * Apply puts (record bytes, or an entity to encode) and deletes (null) in iteration order and
   * move the checkpoint, all in one transaction: if anything throws (SQLite, a bad entity, a
   * record that is not JSON, the iterator itself), neither rows nor checkpoint change and the
   * error is rethrown. Record bytes are stored as they are: the processor passes what it sent
   * to the changelog, restore what it fetched from it. `syncedAt` is given when the checkpoint
   * is the changelog's end (see syncedAt()). `inputs` (input topic -> next offset) raises the
   * input positions in the same transaction; a lower one than recorded is ignored.
   */
  commit(
    changes: Iterable<StoreChange>,
    checkpoint: string,
    syncedAt?: number,
    inputs?: ReadonlyMap<string, bigint>,
  ): void {
    const next = parseOffset(checkpoint, 'checkpoint');
    if (syncedAt !== undefined && !Number.isSafeInteger(syncedAt)) {
      throw new StoreInvalidArgumentError(`syncedAt must be an integer epoch ms, got ${String(syncedAt)}`);
    }
    if (inputs !== undefined) assertInputs(inputs);
    this.file.run('commit', () => this.commitTx(changes, next, syncedAt, inputs));
  }

  /** Records that the rows match the changelog's end as of `at` (a restore reached it): a rebuild is over. */
  markSynced(at: number): void {
    if (!Number.isSafeInteger(at))
      throw new StoreInvalidArgumentError(`at must be an integer epoch ms, got ${String(at)}`);
    this.file.run('markSynced', () => this.markSyncedTx(at));
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

  /**
   * Drop every row, the checkpoint, the input positions and the sync and rebuild stamps, e.g. when the checkpoint is
   * ahead of a recreated changelog. With `rebuildStartedAt`, a rebuild from the changelog's
   * start begins at that instant (recorded in the same transaction; see rebuildStartedAt()).
   */
  wipe(rebuildStartedAt?: number): void {
    if (rebuildStartedAt !== undefined && !Number.isSafeInteger(rebuildStartedAt)) {
      throw new StoreInvalidArgumentError(
        `rebuildStartedAt must be an integer epoch ms, got ${String(rebuildStartedAt)}`,
      );
    }
    this.file.run('wipe', () => this.wipeTx(rebuildStartedAt));
  }

  /** Checkpoint the WAL into the file (TRUNCATE) and close. Idempotent. Ends a read transaction (see reading) first. */
  close(): void {
    if (!this.file.isClosed && this.file.db.inTransaction) {
      try {
        this.stmt.rollback.run();
      } catch {
        // closing rolls back whatever is left
      }
    }
    this.file.close();
  }
}

function decodeEntity([key, record]: EntityRow): StoredEntity {
  try {
    return parseStoredEntity(record);
  } catch (err) {
    throw new StoreCorruptRowError(key, err);
  }
}

function assertInputs(inputs: ReadonlyMap<string, bigint>): void {
  if (!(inputs instanceof Map)) throw new StoreInvalidArgumentError('inputs must be a Map of topic -> offset');
  for (const [topic, offset] of inputs) {
    if (typeof topic !== 'string' || topic === '') {
      throw new StoreInvalidArgumentError(`inputs: topic must be a non-empty string, got ${JSON.stringify(topic)}`);
    }
    if (typeof offset !== 'bigint' || offset < 0n || offset > INT64_MAX) {
      throw new StoreInvalidArgumentError(`inputs: the offset of ${topic} must be a non-negative int64 bigint`);
    }
  }
}
