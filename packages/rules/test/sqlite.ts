// Test helper (not a test): an in-memory table of JSON records, as the replica store keeps them.
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { JsonObject, SqlPrefilter } from '../src';

// better-sqlite3 belongs to packages/store; this package has no dependencies, so borrow it from there.
const Database = require(
  require.resolve('better-sqlite3', { paths: [path.join(__dirname, '../../store')] }),
) as typeof BetterSqlite3;

export class RecordTable {
  private readonly db = new Database(':memory:');
  private readonly insert;

  constructor() {
    this.db.exec('CREATE TABLE records (id INTEGER PRIMARY KEY, value TEXT NOT NULL)');
    this.insert = this.db.prepare('INSERT INTO records (id, value) VALUES (?, ?)');
  }

  /** Replaces the table's contents; record i gets id i. */
  fill(records: JsonObject[]): void {
    this.db.exec('DELETE FROM records');
    records.forEach((r, i) => this.insert.run(i, JSON.stringify(r)));
  }

  /** Ids of the rows the pre-filter lets through, ascending. */
  select(filter: SqlPrefilter): number[] {
    const rows = this.db.prepare(`SELECT id FROM records WHERE ${filter.sql} ORDER BY id`).all(...filter.params);
    return (rows as { id: number }[]).map((r) => r.id);
  }

  /** The pre-filter's value for each row, by id: it should only ever be 0 or 1. */
  filterValues(filter: SqlPrefilter): unknown[] {
    const rows = this.db.prepare(`SELECT (${filter.sql}) AS v FROM records ORDER BY id`).all(...filter.params);
    return (rows as { v: unknown }[]).map((r) => r.v);
  }

  close(): void {
    this.db.close();
  }
}
