import type { CommandResult } from '@state-relay/contracts';
import type { SqliteFile } from '@state-relay/store';
import { CommandStore, toOutcomeCounts, type PlannedCommand } from './command-store';
import type { InflightChunk, OutcomeCounts, ScanPhase, ScanRecord, ScanSpec, ScanStatus } from './scan';

/**
 * The tables of this store in scans.sqlite (part of the file's version 1). Idempotent: the file's
 * schema runs it on a file of any older version (see openScansDatabase).
 */
export const SCAN_TABLES = `
  CREATE TABLE IF NOT EXISTS scans (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,   -- creation order: FIFO queue, newest-first listing
    id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    phase TEXT,
    spec TEXT NOT NULL,                      -- JSON {condition, action, options}
    as_of INTEGER NOT NULL,
    cursor TEXT,                             -- last replica key walked and emitted
    walk_done INTEGER NOT NULL DEFAULT 0,
    inflight TEXT,                           -- JSON of the chunk being emitted, see InflightChunk
    scanned INTEGER NOT NULL DEFAULT 0,
    matched INTEGER NOT NULL DEFAULT 0,
    emitted INTEGER NOT NULL DEFAULT 0,
    resolved INTEGER NOT NULL DEFAULT 0,     -- emitted commands with a result
    backoff_ms INTEGER NOT NULL DEFAULT 0,
    walk_ms INTEGER NOT NULL DEFAULT 0,
    replica_rows INTEGER,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    error TEXT
  );
  CREATE INDEX IF NOT EXISTS scans_by_status ON scans (status, seq);
  -- Results per outcome, kept in the same transaction as the result rows: always equal to
  -- SELECT outcome, count(*) FROM results GROUP BY outcome, without reading them all per request.
  CREATE TABLE IF NOT EXISTS scan_outcomes (
    scan_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (scan_id, outcome)
  ) WITHOUT ROWID;`;

export type { PlannedCommand };

export interface ChunkProgress {
  cursor: string;
  walked: number;
  matched: number;
  walkMs: number;
}

/** A batch as recorded by beginChunk: its extent and the commands new to the scan, in key order. */
export type ChunkExtent = Pick<InflightChunk, 'toKey' | 'walked' | 'matched'>;

interface ScanRow {
  id: string;
  status: ScanStatus;
  phase: ScanPhase | null;
  spec: string;
  as_of: number;
  cursor: string | null;
  walk_done: number;
  inflight: string | null;
  scanned: number;
  matched: number;
  emitted: number;
  resolved: number;
  backoff_ms: number;
  walk_ms: number;
  replica_rows: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
}

/**
 * The scans and their counters in the scanner's own SQLite (separate from the replica). A scan's
 * commands and results are in `commands`, on the same connection: every change that must move
 * together (a chunk's commands and its cursor, a result and the resolved count) is one
 * transaction here.
 */
export class ScanStore {
  /** The commands each scan recorded and the results they got. */
  readonly commands: CommandStore;
  private readonly stmt;
  private readonly recordTx: (results: readonly CommandResult[]) => CommandResult[];
  private readonly beginChunkTx: (id: string, extent: ChunkExtent, commands: readonly PlannedCommand[]) => string[];
  private readonly commitChunkTx: (
    id: string,
    progress: ChunkProgress,
    unsent: readonly string[],
    withdrawn: number,
  ) => void;

  constructor(file: SqliteFile) {
    const db = file.db;
    this.commands = new CommandStore(file);
    this.stmt = {
      insert: db.prepare(`INSERT INTO scans (id, status, spec, as_of, created_at) VALUES (?, 'pending', ?, ?, ?)`),
      get: db.prepare<[string], ScanRow>('SELECT * FROM scans WHERE id = ?'),
      list: db.prepare<[number, number], ScanRow>('SELECT * FROM scans ORDER BY seq DESC LIMIT ? OFFSET ?'),
      count: db.prepare<[], number>('SELECT count(*) FROM scans').pluck(),
      countActive: db.prepare<[], number>(`SELECT count(*) FROM scans WHERE status IN ('pending', 'running')`).pluck(),
      byStatus: db.prepare<[], { status: ScanStatus; n: number }>(
        'SELECT status, count(*) AS n FROM scans GROUP BY status',
      ),
      next: db.prepare<[], ScanRow>(
        `SELECT * FROM scans WHERE status IN ('running', 'pending')
         ORDER BY CASE status WHEN 'running' THEN 0 ELSE 1 END, seq LIMIT 1`,
      ),
      start: db.prepare(
        `UPDATE scans SET status = 'running', phase = ?, started_at = coalesce(started_at, ?) WHERE id = ?`,
      ),
      phase: db.prepare('UPDATE scans SET phase = ? WHERE id = ?'),
      replicaRows: db.prepare('UPDATE scans SET replica_rows = ? WHERE id = ?'),
      backoff: db.prepare('UPDATE scans SET backoff_ms = backoff_ms + ? WHERE id = ?'),
      walkDone: db.prepare('UPDATE scans SET walk_done = 1, phase = ? WHERE id = ?'),
      finish: db.prepare('UPDATE scans SET status = ?, phase = NULL, finished_at = ?, error = ? WHERE id = ?'),
      setInflight: db.prepare('UPDATE scans SET inflight = ? WHERE id = ?'),
      commit: db.prepare(
        `UPDATE scans SET cursor = ?, scanned = scanned + ?, matched = matched + ?,
           walk_ms = walk_ms + ?, emitted = emitted - ?, inflight = NULL WHERE id = ?`,
      ),
      // One statement: the count and the batch's `sent` mark move together.
      markSent: db.prepare('UPDATE scans SET emitted = emitted + ?, inflight = ? WHERE id = ?'),
      resolve: db.prepare('UPDATE scans SET resolved = resolved + ? WHERE id = ?'),
      countOutcome: db.prepare(
        `INSERT INTO scan_outcomes (scan_id, outcome, n) VALUES (?, ?, ?)
         ON CONFLICT (scan_id, outcome) DO UPDATE SET n = n + excluded.n`,
      ),
      // Finished scans whose rows retention drops: finished before the cutoff, or older than the
      // newest `keep` finished ones; only those that still have rows.
      prunable: db
        .prepare<[number, number], string>(
          `SELECT id FROM scans s
           WHERE status IN ('completed', 'cancelled', 'failed')
             AND (finished_at < ? OR seq NOT IN (
               SELECT seq FROM scans WHERE status IN ('completed', 'cancelled', 'failed')
               ORDER BY finished_at DESC, seq DESC LIMIT ?))
             AND (EXISTS (SELECT 1 FROM scan_commands c WHERE c.scan_id = s.id)
               OR EXISTS (SELECT 1 FROM results r WHERE r.scan_id = s.id))
           ORDER BY seq`,
        )
        .pluck(),
      outcomes: db.prepare<[string], { outcome: string; n: number }>(
        'SELECT outcome, n FROM scan_outcomes WHERE scan_id = ?',
      ),
    };

    this.beginChunkTx = db.transaction((id, extent, commands) => {
      const fresh = this.commands.plan(id, commands);
      const inflight: InflightChunk = { ...extent, commands: fresh.length, sent: 0 };
      this.stmt.setInflight.run(JSON.stringify(inflight), id);
      return fresh;
    });
    this.commitChunkTx = db.transaction((id, p, unsent, withdrawn) => {
      this.commands.forget(id, unsent);
      this.stmt.commit.run(p.cursor, p.walked, p.matched, Math.round(p.walkMs), withdrawn, id);
    });
    this.recordTx = db.transaction((results) => {
      const perScan = new Map<string, Map<string, number>>();
      const recorded = this.commands.record(results);
      for (const r of recorded) {
        const counts = perScan.get(r.scanId) ?? new Map<string, number>();
        counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
        perScan.set(r.scanId, counts);
      }
      for (const [scanId, counts] of perScan) {
        let total = 0;
        for (const [outcome, n] of counts) {
          this.stmt.countOutcome.run(scanId, outcome, n);
          total += n;
        }
        this.stmt.resolve.run(total, scanId);
      }
      return recorded;
    });
  }

  create(id: string, spec: ScanSpec, asOf: number, createdAt: number): ScanRecord {
    this.stmt.insert.run(id, JSON.stringify(spec), asOf, createdAt);
    return this.get(id)!;
  }

  get(id: string): ScanRecord | undefined {
    const row = this.stmt.get.get(id);
    return row === undefined ? undefined : toScan(row);
  }

  /** Newest first. */
  list(limit: number, offset: number): ScanRecord[] {
    return this.stmt.list.all(limit, offset).map(toScan);
  }

  count(): number {
    return this.stmt.count.get() ?? 0;
  }

  /** Scans pending or running: the queue MAX_ACTIVE_SCANS bounds. */
  countActive(): number {
    return this.stmt.countActive.get() ?? 0;
  }

  countByStatus(): Map<ScanStatus, number> {
    return new Map(this.stmt.byStatus.all().map((r) => [r.status, r.n]));
  }

  /** The scan to run next: one left running by a stopped or crashed scanner first, else the oldest pending. */
  next(): ScanRecord | undefined {
    const row = this.stmt.next.get();
    return row === undefined ? undefined : toScan(row);
  }

  markRunning(id: string, phase: ScanPhase, at: number): void {
    this.stmt.start.run(phase, at, id);
  }

  setPhase(id: string, phase: ScanPhase): void {
    this.stmt.phase.run(phase, id);
  }

  setReplicaRows(id: string, rows: number): void {
    this.stmt.replicaRows.run(rows, id);
  }

  addBackoff(id: string, ms: number): void {
    this.stmt.backoff.run(Math.round(ms), id);
  }

  markWalkDone(id: string, phase: ScanPhase): void {
    this.stmt.walkDone.run(phase, id);
  }

  finish(
    id: string,
    status: Extract<ScanStatus, 'completed' | 'cancelled' | 'failed'>,
    at: number,
    error?: string,
  ): void {
    this.stmt.finish.run(status, at, error ?? null, id);
  }

  /**
   * Records a batch's commands before any is sent, with the batch's extent (inflight, `sent` 0).
   * Returns the keys that were new to the scan, in order; only those are sent and counted. If the
   * scanner dies before commitChunk, resuming re-sends exactly these.
   */
  beginChunk(id: string, extent: ChunkExtent, commands: readonly PlannedCommand[]): string[] {
    return this.beginChunkTx(id, extent, commands);
  }

  /**
   * Counts `n` more of the inflight batch's commands as emitted, just before they are first handed
   * to the producer; `inflight` is the batch with its `sent` already moved on by `n`. Counting
   * before the send means a result can never arrive for a command `emitted` does not count yet.
   */
  markSent(id: string, inflight: InflightChunk, n: number): void {
    this.stmt.markSent.run(n, JSON.stringify(inflight), id);
  }

  /**
   * The batch was sent: move the cursor and add its walk counts, in one transaction. `unsent` are
   * the keys whose commands a cancel kept from ever being handed to the producer, or the broker
   * refused: they are forgotten, so not waited for; `withdrawn` of them were counted by markSent
   * and are taken off `emitted`. (Others counted by markSent are kept: they may have arrived.)
   */
  commitChunk(id: string, progress: ChunkProgress, unsent: readonly string[] = [], withdrawn = 0): void {
    this.commitChunkTx(id, progress, unsent, withdrawn);
  }

  /**
   * Records results of commands this scanner emitted (others are ignored); a command's first
   * result wins, so re-delivered and duplicate results change nothing. Returns the results recorded.
   * The caller checks that each result's commandId is commandIdFor(scanId, key).
   */
  recordResults(results: readonly CommandResult[]): CommandResult[] {
    if (results.length === 0) return [];
    return this.recordTx(results);
  }

  /**
   * Finished scans whose per-command rows are past retention: finished before `finishedBefore`,
   * or not among the newest `keepNewest` finished scans. Pending and running scans never are.
   */
  prunableScans(finishedBefore: number, keepNewest: number): string[] {
    return this.stmt.prunable.all(finishedBefore, keepNewest);
  }

  /** Results by outcome, from the counters kept with the result rows. */
  outcomeCounts(id: string): OutcomeCounts {
    return toOutcomeCounts(this.stmt.outcomes.all(id));
  }
}

/**
 * A persisted inflight batch. One written before `sent` existed counted its commands as `emitted`
 * and none of them in the scan's emitted yet: read as `commands` with nothing sent.
 */
function toInflight(json: string): InflightChunk {
  const raw = JSON.parse(json) as Partial<InflightChunk> & { emitted?: number };
  return {
    toKey: raw.toKey!,
    walked: raw.walked ?? 0,
    matched: raw.matched ?? 0,
    commands: raw.commands ?? raw.emitted ?? 0,
    sent: raw.sent ?? 0,
  };
}

function toScan(r: ScanRow): ScanRecord {
  return {
    id: r.id,
    status: r.status,
    phase: r.phase,
    spec: JSON.parse(r.spec) as ScanSpec,
    asOf: r.as_of,
    cursor: r.cursor,
    walkDone: r.walk_done === 1,
    inflight: r.inflight === null ? null : toInflight(r.inflight),
    scanned: r.scanned,
    matched: r.matched,
    emitted: r.emitted,
    resolved: r.resolved,
    backoffMs: r.backoff_ms,
    walkMs: r.walk_ms,
    replicaRows: r.replica_rows,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    error: r.error,
  };
}
