import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Statement } from 'better-sqlite3';
import { ChunkStatements } from './chunk-statements';
import { parseStoredEntity } from '@state-relay/contracts';
import { assertAfterKey, assertKey, assertLimit, decodeValue } from './codec';
import { StoreCorruptRowError, StoreInvalidArgumentError, StoreInvalidFilterError } from './errors';
import { assertOffset, formatOffset, offsetGreater, parseOffset } from './offset';
import { SqliteFile, type Schema } from './sqlite-file';
import type {
  ChangelogRecord,
  Chunk,
  ChunkRequest,
  FilterParam,
  ReplicaEntity,
  ReplicaRow,
  WalCheckpointResult,
} from './types';

const SCHEMA: Schema = {
  // 2: the sync table. 3: a row holds the changelog record's bytes as they are; files below 3 are
  // dropped and rebuilt (see DECISIONS.md, 'Rows are the changelog's bytes').
  version: 3,
  rebuildBelow: 3,
  drop: `DROP TABLE IF EXISTS entities; DROP TABLE IF EXISTS offsets; DROP TABLE IF EXISTS sync;`,
  ddl: `
    CREATE TABLE IF NOT EXISTS entities (
      key TEXT PRIMARY KEY,
      record TEXT NOT NULL  -- the changelog value: JSON of StoredEntity
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS offsets (
      partition INTEGER PRIMARY KEY,
      next_offset INTEGER NOT NULL  -- next changelog offset to consume
    );
    -- When the replica last matched the changelog's end on every partition (epoch ms).
    CREATE TABLE IF NOT EXISTS sync (
      id INTEGER PRIMARY KEY CHECK (id = 0),
      synced_at INTEGER NOT NULL
    );`,
};

const MAX_PARTITION = 2 ** 31 - 1;

export interface ReplicaStoreOptions {
  path: string;
  /** How long a statement waits for another connection's lock; default 5000. */
  busyTimeoutMs?: number;
}

/**
 * The scanner's read-only replica of the changelog. Rows and the per-partition next offsets
 * change in one transaction, so after a crash the replica resumes from exactly the offsets
 * its rows reflect. Each read is one short statement run to completion: no read transaction
 * outlives a call, so the WAL can always be checkpointed between chunks.
 */
export class ReplicaStore {
  private readonly file: SqliteFile;
  private readonly chunks: ChunkStatements;
  private readonly stmt: {
    get: Statement<[string], string>;
    put: Statement<[string | Buffer, Buffer, Buffer]>;
    del: Statement<[string | Buffer]>;
    count: Statement<[], number>;
    offsets: Statement<[], [bigint, bigint]>;
    setOffset: Statement<[number, bigint]>;
    clearRows: Statement<[]>;
    clearOffsets: Statement<[]>;
    getSyncedAt: Statement<[], number>;
    setSyncedAt: Statement<[number]>;
    clearSync: Statement<[]>;
  };
  private readonly applyTx: (records: readonly ChangelogRecord[], through?: FetchedThrough) => number;
  private readonly wipeTx: () => void;

  private constructor(file: SqliteFile) {
    this.file = file;
    const db = file.db;
    this.chunks = new ChunkStatements(db);
    this.stmt = {
      get: db.prepare<[string], string>('SELECT record FROM entities WHERE key = ?').pluck(),
      // As in TaskStore: the bytes are stored as TEXT by SQLite, checked by json_valid (no JS decode).
      put: db.prepare(
        `INSERT INTO entities (key, record) SELECT CAST(? AS TEXT), CAST(? AS TEXT) WHERE json_valid(CAST(? AS TEXT))
         ON CONFLICT (key) DO UPDATE SET record = excluded.record`,
      ),
      del: db.prepare('DELETE FROM entities WHERE key = CAST(? AS TEXT)'),
      count: db.prepare<[], number>('SELECT count(*) FROM entities').pluck(),
      offsets: db
        .prepare<[], [bigint, bigint]>('SELECT partition, next_offset FROM offsets ORDER BY partition')
        .raw()
        .safeIntegers(),
      setOffset: db.prepare(
        `INSERT INTO offsets (partition, next_offset) VALUES (?, ?)
         ON CONFLICT (partition) DO UPDATE SET next_offset = excluded.next_offset`,
      ),
      clearRows: db.prepare('DELETE FROM entities'),
      clearOffsets: db.prepare('DELETE FROM offsets'),
      getSyncedAt: db.prepare<[], number>('SELECT synced_at FROM sync WHERE id = 0').pluck(),
      setSyncedAt: db.prepare(
        'INSERT INTO sync (id, synced_at) VALUES (0, ?) ON CONFLICT (id) DO UPDATE SET synced_at = excluded.synced_at',
      ),
      clearSync: db.prepare('DELETE FROM sync'),
    };
    this.applyTx = db.transaction((records: readonly ChangelogRecord[], through?: FetchedThrough) => {
      const { put, del } = this.stmt;
      // Highest offset per partition, compared as decimal strings: no BigInt per record.
      const highest = new Map<number, string>();
      let skipped = 0;
      for (const { partition, offset, key, value } of records) {
        assertPartition(partition);
        assertOffset(offset, 'offset');
        if (typeof key !== 'string' && !Buffer.isBuffer(key)) assertKey(key);
        if (value === null) del.run(key);
        else if (!Buffer.isBuffer(value)) throw new StoreInvalidArgumentError('value must be a Buffer or null');
        else if (put.run(key, value, value).changes === 0) skipped++;
        const seen = highest.get(partition);
        if (seen === undefined || offsetGreater(offset, seen)) highest.set(partition, offset);
      }
      const next = new Map([...highest].map(([partition, offset]) => [partition, BigInt(offset) + 1n]));
      if (through !== undefined && through.next > (next.get(through.partition) ?? -1n)) {
        next.set(through.partition, through.next);
      }
      for (const [partition, offset] of next) this.stmt.setOffset.run(partition, offset);
      return skipped;
    });
    this.wipeTx = db.transaction(() => {
      this.stmt.clearRows.run();
      this.stmt.clearOffsets.run();
      this.stmt.clearSync.run();
    });
  }

  static open({ path, busyTimeoutMs }: ReplicaStoreOptions): ReplicaStore {
    if (typeof path !== 'string' || path === '') {
      throw new StoreInvalidArgumentError('path must be a non-empty file path');
    }
    mkdirSync(dirname(path), { recursive: true });
    return new ReplicaStore(SqliteFile.open(path, SCHEMA, busyTimeoutMs));
  }

  get path(): string {
    return this.file.path;
  }

  /**
   * Apply changelog records in order (null value = tombstone), their bytes as they are, and
   * set each partition's next offset to its highest offset in the batch + 1, in one
   * transaction: all or nothing. A value that is not JSON is skipped (only the processor
   * writes the changelog, so that is a bug there); returns how many were.
   *
   * `through`: where the fetch of these records ended on one partition (its last offset + 1,
   * trailing transaction markers and aborted records included), stored in the same transaction
   * when past the records; with no records it alone is stored (a batch of only markers).
   */
  apply(records: readonly ChangelogRecord[], through?: { partition: number; next: string }): number {
    if (!Array.isArray(records)) throw new StoreInvalidArgumentError('records must be an array');
    const position = through === undefined ? undefined : fetchedThrough(through);
    if (records.length === 0 && position === undefined) return 0;
    return this.file.run('apply', () => this.applyTx(records, position));
  }

  /** The schema version of a file written by older code whose rows were dropped on open, or null. */
  get rebuiltFrom(): number | null {
    return this.file.rebuiltFrom;
  }

  /**
   * When the replica last matched the changelog's end on every partition, or null: older than
   * delete.retention.ms, it must be rebuilt (see DECISIONS.md, 'Rebuilt, not caught up, past delete.retention.ms').
   */
  syncedAt(): number | null {
    const value = this.file.run('syncedAt', () => this.stmt.getSyncedAt.get());
    return typeof value === 'number' ? value : null;
  }

  markSynced(at: number): void {
    if (!Number.isSafeInteger(at))
      throw new StoreInvalidArgumentError(`at must be an integer epoch ms, got ${String(at)}`);
    this.file.run('markSynced', () => this.stmt.setSyncedAt.run(at));
  }

  /** Next offset to consume per partition; partitions never applied are absent. */
  offsets(): Map<number, string> {
    const rows = this.file.run('offsets', () => this.stmt.offsets.all());
    return new Map(rows.map(([partition, offset]) => [Number(partition), formatOffset(offset)]));
  }

  get(key: string): ReplicaEntity | undefined {
    assertKey(key);
    const record = this.file.run('get', () => this.stmt.get.get(key));
    if (record === undefined) return undefined;
    try {
      const { version, value } = parseStoredEntity(record);
      return { version, value };
    } catch (err) {
      throw new StoreCorruptRowError(key, err);
    }
  }

  count(): number {
    return this.file.run('count', () => this.stmt.count.get() ?? 0);
  }

  /**
   * Walk the next `limit` keys after `afterKey` in key order (SQLite BINARY, i.e. UTF-8 byte
   * order) and return those matching `filterSql`. One synchronous statement: keep `limit`
   * small (a few thousand) so the event loop is never held for long.
   */
  chunk({ afterKey, limit, filterSql, filterParams = [] }: ChunkRequest): Chunk {
    assertAfterKey(afterKey);
    assertLimit(limit);
    if (filterSql !== undefined && (typeof filterSql !== 'string' || filterSql.trim() === '')) {
      throw new StoreInvalidFilterError('filterSql must be a non-empty SQL expression');
    }
    const params = [...bindFilterParams(filterParams), ...(afterKey === null ? [] : [afterKey]), limit];
    const walked = this.file.run('chunk', () => {
      const stmt = this.chunks.statement(filterSql, afterKey === null);
      try {
        return stmt.all(...params);
      } catch (err) {
        // better-sqlite3 rejects a wrong number of parameters with a RangeError before running.
        if (isRangeError(err)) {
          throw new StoreInvalidFilterError(`filter parameters do not fit: ${String(err.message)}`, err);
        }
        throw err;
      }
    });
    const rows: ReplicaRow[] = [];
    for (const [key, version, value] of walked) {
      if (value !== null) rows.push({ key, version, value: decodeValue(key, value) });
    }
    const last = walked[walked.length - 1];
    return { rows, lastKey: last === undefined ? null : last[0], walked: walked.length };
  }

  /** Drop all rows, offsets and the sync stamp: the replica must be rebuilt from the changelog's start. */
  wipe(): void {
    this.file.run('wipe', () => this.wipeTx());
  }

  /** Copy WAL frames back into the database; TRUNCATE also resets the WAL file to zero bytes. */
  checkpointWal(mode: 'PASSIVE' | 'TRUNCATE' = 'PASSIVE'): WalCheckpointResult {
    return this.file.checkpointWal(mode);
  }

  walSizeBytes(): number {
    return this.file.walSizeBytes();
  }

  /** Database pages plus the WAL file, in bytes. */
  sizeBytes(): number {
    return this.file.sizeBytes();
  }

  /** Checkpoint the WAL into the file (TRUNCATE) and close. Idempotent. */
  close(): void {
    this.file.close();
  }
}

interface FetchedThrough {
  partition: number;
  next: bigint;
}

function fetchedThrough({ partition, next }: { partition: number; next: string }): FetchedThrough {
  assertPartition(partition);
  return { partition, next: parseOffset(next, 'through.next') };
}

function assertPartition(partition: unknown): asserts partition is number {
  if (!Number.isInteger(partition) || (partition as number) < 0 || (partition as number) > MAX_PARTITION) {
    throw new StoreInvalidArgumentError(`partition must be a non-negative int32, got ${String(partition)}`);
  }
}

function bindFilterParams(params: readonly FilterParam[]): Array<string | number | bigint | null> {
  if (!Array.isArray(params)) throw new StoreInvalidFilterError('filterParams must be an array');
  return params.map((p: unknown, i) => {
    if (typeof p === 'boolean') return p ? 1 : 0; // json_extract yields 1/0 for JSON true/false
    if (p === null || typeof p === 'string' || typeof p === 'number' || typeof p === 'bigint') return p;
    throw new StoreInvalidFilterError(`filterParams[${i}] must be a string, number, bigint, boolean or null`);
  });
}

/** By name, not instanceof: the addon's RangeError may come from another realm (e.g. under jest). */
function isRangeError(err: unknown): err is { message: unknown } {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'RangeError';
}
