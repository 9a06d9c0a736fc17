import { COMMAND_OUTCOMES, type CommandResult } from '@state-relay/contracts';
import type { SqliteFile } from '@state-relay/store';
import type { OutcomeCounts } from './scan';

/**
 * The tables of this store in scans.sqlite (part of the file's version 1). Idempotent: the file's
 * schema runs it on a file of any older version (see openScansDatabase).
 */
export const COMMAND_TABLES = `
  -- A command is identified by (scan_id, key): its id is commandIdFor(scan_id, key). Keyed so, a
  -- scan's rows are appended in key order (the walk's order) instead of scattered by a hash id.
  CREATE TABLE IF NOT EXISTS scan_commands (
    scan_id TEXT NOT NULL,
    key TEXT NOT NULL,
    expected_version INTEGER,
    PRIMARY KEY (scan_id, key)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS results (
    scan_id TEXT NOT NULL,
    key TEXT NOT NULL,
    command_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT,
    version INTEGER,
    processed_at INTEGER NOT NULL,
    PRIMARY KEY (scan_id, key)               -- the first result of a command wins
  ) WITHOUT ROWID;`;

/** A command as recorded before it is sent: with the scan, enough to send it again after a crash. */
export interface PlannedCommand {
  key: string;
  expectedVersion?: number;
}

/**
 * The commands each scan recorded before sending them, and the results the processor sent back
 * for them. Its writes run inside ScanStore's transactions, which move the scan's cursor and
 * counters with them; on its own it writes nothing.
 */
export class CommandStore {
  private readonly stmt;

  constructor(file: SqliteFile) {
    const db = file.db;
    this.stmt = {
      plan: db.prepare('INSERT OR IGNORE INTO scan_commands (scan_id, key, expected_version) VALUES (?, ?, ?)'),
      forget: db.prepare('DELETE FROM scan_commands WHERE scan_id = ? AND key = ?'),
      chunk: db.prepare<[string, string, string], { key: string; expected_version: number | null }>(
        'SELECT key, expected_version FROM scan_commands WHERE scan_id = ? AND key > ? AND key <= ? ORDER BY key',
      ),
      record: db.prepare(
        `INSERT OR IGNORE INTO results (scan_id, key, command_id, outcome, reason, version, processed_at)
         SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM scan_commands WHERE scan_id = ? AND key = ?)`,
      ),
      // The last key of the scan's next `limit` commands: a batch ends there, so each delete is a key range.
      batchEnd: db
        .prepare<[string, number], string | null>(
          'SELECT max(key) FROM (SELECT key FROM scan_commands WHERE scan_id = ? ORDER BY key LIMIT ?)',
        )
        .pluck(),
      dropResults: db.prepare('DELETE FROM results WHERE scan_id = ? AND key <= ?'),
      dropCommands: db.prepare('DELETE FROM scan_commands WHERE scan_id = ? AND key <= ?'),
      dropAllResults: db.prepare('DELETE FROM results WHERE scan_id = ?'),
      groupOutcomes: db.prepare<[string], { outcome: string; n: number }>(
        'SELECT outcome, count(*) AS n FROM results WHERE scan_id = ? GROUP BY outcome',
      ),
    };
  }

  /** Records the commands the scan has not recorded yet; returns their keys, in order. */
  plan(scanId: string, commands: readonly PlannedCommand[]): string[] {
    const fresh: string[] = [];
    for (const c of commands) {
      if (this.stmt.plan.run(scanId, c.key, c.expectedVersion ?? null).changes > 0) fresh.push(c.key);
    }
    return fresh;
  }

  /** Forgets commands that were never handed to the producer, so nobody waits for their results. */
  forget(scanId: string, keys: readonly string[]): void {
    for (const key of keys) this.stmt.forget.run(scanId, key);
  }

  /** Commands recorded for keys in (afterKey, toKey]: the inflight chunk to re-send after a crash. */
  chunk(scanId: string, afterKey: string | null, toKey: string): PlannedCommand[] {
    // '' sorts before every other key, and keys are never empty in a chunk walk.
    return this.stmt.chunk.all(scanId, afterKey ?? '', toKey).map((r) => ({
      key: r.key,
      ...(r.expected_version === null ? {} : { expectedVersion: r.expected_version }),
    }));
  }

  /**
   * Records the results of commands a scan recorded (others are ignored); a command's first
   * result wins. Returns the results recorded, for the scan's counters.
   */
  record(results: readonly CommandResult[]): CommandResult[] {
    const recorded: CommandResult[] = [];
    for (const r of results) {
      const { changes } = this.stmt.record.run(
        r.scanId,
        r.key,
        r.commandId,
        r.outcome,
        r.reason ?? null,
        r.version ?? null,
        r.processedAt,
        r.scanId,
        r.key,
      );
      if (changes > 0) recorded.push(r);
    }
    return recorded;
  }

  /**
   * Deletes up to `limit` of a scan's commands, first in key order, with their results; once none
   * is left, any result left over. Returns the rows deleted (0: the scan has none left). A result
   * arriving later finds no command and is ignored, as for any command the scan did not record.
   */
  dropRows(scanId: string, limit: number): number {
    const end = this.stmt.batchEnd.get(scanId, limit);
    if (end === null || end === undefined) return this.stmt.dropAllResults.run(scanId).changes;
    return this.stmt.dropResults.run(scanId, end).changes + this.stmt.dropCommands.run(scanId, end).changes;
  }

  /** A scan's results by outcome, recomputed from the rows (reads them all: for checks, not per request). */
  countResults(scanId: string): OutcomeCounts {
    return toOutcomeCounts(this.stmt.groupOutcomes.all(scanId));
  }
}

/** Rows of (outcome, n) as counts of every outcome, 0 where there is no row. */
export function toOutcomeCounts(rows: Array<{ outcome: string; n: number }>): OutcomeCounts {
  const counts = Object.fromEntries(COMMAND_OUTCOMES.map((o) => [o, 0])) as OutcomeCounts;
  for (const { outcome, n } of rows) {
    if (outcome in counts) counts[outcome as keyof OutcomeCounts] = n;
  }
  return counts;
}
