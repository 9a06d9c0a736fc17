import type { Database, Statement } from 'better-sqlite3';
import { StoreInvalidFilterError } from './errors';

/** A walked row: key, version, and the value's JSON text only when the filter matched (else null). */
export type WalkedRow = [key: string, version: number, value: string | null];

/** Statements kept per filter text; a scan reuses one filter for thousands of chunks. */
const MAX_CACHED_FILTERS = 32;

/**
 * Prepares the keyset-pagination query of ReplicaStore.chunk: the inner query walks the next
 * `limit` keys on the primary key; the outer CASE hands back the value's JSON text only for rows
 * the filter accepts (see DECISIONS.md, 'A chunk walks keys and returns only matches').
 * Placeholders are numbered by position: the filter's `?`s first, then the cursor and the limit.
 */
export class ChunkStatements {
  private readonly cache = new Map<string, Statement<unknown[], WalkedRow>>();

  constructor(private readonly db: Database) {}

  statement(filterSql: string | undefined, fromStart: boolean): Statement<unknown[], WalkedRow> {
    const cacheKey = `${fromStart ? 'S' : 'A'}${filterSql ?? ''}`;
    let stmt = this.cache.get(cacheKey);
    if (stmt !== undefined) {
      // Refresh recency so the filter of an ongoing scan stays cached.
      this.cache.delete(cacheKey);
    } else {
      stmt = this.prepare(filterSql, fromStart);
      if (this.cache.size >= MAX_CACHED_FILTERS) this.cache.delete(this.cache.keys().next().value as string);
    }
    this.cache.set(cacheKey, stmt);
    return stmt;
  }

  private prepare(filterSql: string | undefined, fromStart: boolean): Statement<unknown[], WalkedRow> {
    // Rows hold whole changelog records: the filter reads the column `record` (the entity's
    // value at $.value); only matched rows hand back their value's JSON text.
    const window = `SELECT key, record FROM entities ${fromStart ? '' : 'WHERE key > ?'} ORDER BY key LIMIT ?`;
    const value = `record -> '$.value'`;
    const sql =
      filterSql === undefined
        ? `SELECT key, record ->> '$.version', ${value} FROM (${window})`
        : `SELECT key, record ->> '$.version', CASE WHEN (${filterSql}) THEN ${value} END AS v FROM (${window})`;
    let stmt: Statement<unknown[], WalkedRow>;
    try {
      stmt = this.db.prepare<unknown[], WalkedRow>(sql);
    } catch (err) {
      throw new StoreInvalidFilterError(`filter does not compile: ${(err as Error).message}`, err);
    }
    if (!stmt.readonly) throw new StoreInvalidFilterError('filter must be a read-only expression');
    return stmt.raw();
  }
}
