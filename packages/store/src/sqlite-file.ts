import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import {
  StoreClosedError,
  StoreError,
  StoreInvalidArgumentError,
  StoreOpenError,
  StoreSchemaMismatchError,
  toStoreError,
} from './errors';
import type { WalCheckpointResult } from './types';

/** Default wait for another connection's lock before a statement fails with SQLITE_BUSY. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;
/** SQLite's default, set explicitly so a file opened elsewhere with another value is put back. */
const WAL_AUTOCHECKPOINT_PAGES = 1000;

export interface Schema {
  /** Stored in PRAGMA user_version; a file with a higher version is refused. */
  version: number;
  ddl: string;
  /**
   * A file below this version holds rows this code cannot read: `drop` runs before `ddl` and
   * the store starts empty (it is a cache of the changelog, which rebuilds it).
   */
  rebuildBelow?: number;
  drop?: string;
}

/**
 * One SQLite file opened the way both stores need it: WAL (readers never block the writer),
 * synchronous=NORMAL (see DECISIONS.md, 'synchronous=NORMAL'), a busy timeout, and a versioned schema.
 */
export class SqliteFile {
  private closed = false;

  private constructor(
    readonly path: string,
    readonly db: Database.Database,
    /** The older schema version whose rows were dropped on open (see Schema.rebuildBelow), if any. */
    readonly rebuiltFrom: number | null,
  ) {}

  static open(path: string, schema: Schema, busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS): SqliteFile {
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
      throw new StoreInvalidArgumentError(`busyTimeoutMs must be a non-negative integer, got ${String(busyTimeoutMs)}`);
    }
    let db: Database.Database | undefined;
    try {
      db = new Database(path);
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') {
        throw new StoreInvalidArgumentError(`${path}: WAL needs a file on disk (journal_mode is ${String(mode)})`);
      }
      db.pragma('synchronous = NORMAL');
      db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      const rebuiltFrom = migrate(path, db, schema);
      return new SqliteFile(path, db, rebuiltFrom);
    } catch (err) {
      db?.close();
      throw err instanceof StoreError ? err : new StoreOpenError(path, err);
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  assertOpen(): void {
    if (this.closed) throw new StoreClosedError(this.path);
  }

  /** Run a SQLite operation, naming its failure with a StoreError. */
  run<T>(operation: string, fn: () => T): T {
    this.assertOpen();
    try {
      return fn();
    } catch (err) {
      throw toStoreError(operation, err);
    }
  }

  /** Database pages plus the WAL file: what the store occupies on disk right now. */
  sizeBytes(): number {
    return this.run('sizeBytes', () => {
      const pages = this.db.pragma('page_count', { simple: true }) as number;
      const pageSize = this.db.pragma('page_size', { simple: true }) as number;
      return pages * pageSize + this.walSizeBytes();
    });
  }

  walSizeBytes(): number {
    this.assertOpen();
    try {
      return statSync(`${this.path}-wal`).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
  }

  checkpointWal(mode: 'PASSIVE' | 'TRUNCATE'): WalCheckpointResult {
    if (mode !== 'PASSIVE' && mode !== 'TRUNCATE') {
      throw new StoreInvalidArgumentError(`checkpoint mode must be PASSIVE or TRUNCATE, got ${String(mode)}`);
    }
    return this.run('checkpointWal', () => {
      const [row] = this.db.pragma(`wal_checkpoint(${mode})`) as Array<{
        busy: number;
        log: number;
        checkpointed: number;
      }>;
      return { busy: row?.busy === 1, walPages: row?.log ?? -1, checkpointed: row?.checkpointed ?? -1 };
    });
  }

  /** Fold the WAL back into the file (so a copied file is complete), then close. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch (err) {
      this.db.close();
      throw toStoreError('close', err);
    }
    this.db.close();
  }
}

/** Brings the file to `schema.version`; returns the version whose rows it dropped, if it did. */
function migrate(path: string, db: Database.Database, schema: Schema): number | null {
  const found = db.pragma('user_version', { simple: true }) as number;
  if (found > schema.version) throw new StoreSchemaMismatchError(path, found, schema.version);
  if (found === schema.version) return null;
  const rebuild = found > 0 && schema.rebuildBelow !== undefined && found < schema.rebuildBelow;
  db.transaction(() => {
    if (rebuild && schema.drop) db.exec(schema.drop);
    db.exec(schema.ddl);
    db.pragma(`user_version = ${schema.version}`);
  })();
  return rebuild ? found : null;
}
