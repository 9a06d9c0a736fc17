import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { commandIdFor } from '@state-relay/contracts';
import pino from 'pino';
import { openScansDatabase, type ScansDatabase } from '../src/scanner';
import { ScanRowsRetention } from '../src/scans/scan-retention';
import type { ScanStore } from '../src/scans/scan-store';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 1);

describe('retention of finished scans’ command and result rows (real SQLite)', () => {
  let dir: string;
  let database: ScansDatabase;
  let store: ScanStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'scanner-retention-'));
    database = openScansDatabase(join(dir, 'scans.sqlite'));
    store = database.scans;
  });
  afterEach(() => {
    database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A scan that emitted `n` commands and got a result for `answered` of them; finished at `finishedAt` unless null. */
  function scan(id: string, n: number, answered: number, finishedAt: number | null) {
    store.create(id, { ...DORMANCY_SWEEP, options: {} }, NOW, NOW);
    store.markRunning(id, 'walking', NOW);
    const keys = Array.from({ length: n }, (_, i) => `k${String(i).padStart(5, '0')}`);
    store.beginChunk(
      id,
      { toKey: keys.at(-1)!, walked: n, matched: n },
      keys.map((key) => ({ key })),
    );
    store.markSent(id, { toKey: keys.at(-1)!, walked: n, matched: n, commands: n, sent: n }, n);
    store.commitChunk(id, { cursor: keys.at(-1)!, walked: n, matched: n, walkMs: 1 });
    store.recordResults(
      keys.slice(0, answered).map((key) => ({
        commandId: commandIdFor(id, key),
        scanId: id,
        key,
        outcome: 'applied' as const,
        processedAt: NOW,
      })),
    );
    if (finishedAt !== null) store.finish(id, 'completed', finishedAt);
  }

  const rows = (table: 'scan_commands' | 'results', id: string) =>
    database.file.db.prepare<[string], number>(`SELECT count(*) FROM ${table} WHERE scan_id = ?`).pluck().get(id);
  const summary = (id: string) => {
    const s = store.get(id)!;
    return { status: s.status, emitted: s.emitted, resolved: s.resolved, applied: store.outcomeCounts(id).applied };
  };

  function retention(maxAgeMs: number, maxScans: number) {
    return new ScanRowsRetention(store, pino({ level: 'silent' }), {
      maxAgeMs,
      maxScans,
      intervalMs: HOUR,
      batchRows: 7, // several batches per scan
      now: () => NOW,
    });
  }

  it('drops the rows of scans finished longer ago than the age, keeps the newer ones, running ones and every summary', async () => {
    scan('old', 40, 40, NOW - 48 * HOUR);
    scan('recent', 30, 30, NOW - HOUR);
    scan('running', 25, 10, null);
    const before = ['old', 'recent', 'running'].map(summary);

    expect(await retention(24 * HOUR, 100).prune()).toEqual({ scans: 1, rows: 80 });

    expect([rows('scan_commands', 'old'), rows('results', 'old')]).toEqual([0, 0]);
    expect([rows('scan_commands', 'recent'), rows('results', 'recent')]).toEqual([30, 30]);
    expect([rows('scan_commands', 'running'), rows('results', 'running')]).toEqual([25, 10]);
    expect(['old', 'recent', 'running'].map(summary)).toEqual(before);
    expect(summary('old')).toEqual({ status: 'completed', emitted: 40, resolved: 40, applied: 40 });
  });

  it('keeps the rows of the newest N finished scans only, never a running scan’s', async () => {
    scan('first', 10, 10, NOW - 3 * HOUR);
    scan('second', 10, 10, NOW - 2 * HOUR);
    scan('third', 10, 5, NOW - HOUR);
    scan('running', 10, 3, null);

    expect(await retention(365 * 24 * HOUR, 1).prune()).toEqual({ scans: 2, rows: 40 });

    expect(['first', 'second', 'third', 'running'].map((id) => rows('scan_commands', id))).toEqual([0, 0, 10, 10]);
    expect(['first', 'second', 'third', 'running'].map((id) => rows('results', id))).toEqual([0, 0, 5, 3]);
    expect(summary('first')).toEqual({ status: 'completed', emitted: 10, resolved: 10, applied: 10 });
    // A second run has nothing left to do.
    expect(await retention(365 * 24 * HOUR, 1).prune()).toEqual({ scans: 0, rows: 0 });
  });

  it('a late result for a pruned scan is ignored: the counts stay as they were', async () => {
    scan('cancelled', 10, 4, NOW - 48 * HOUR);
    await retention(HOUR, 0).prune();
    const late = { commandId: commandIdFor('cancelled', 'k00005'), scanId: 'cancelled', key: 'k00005' };
    expect(store.recordResults([{ ...late, outcome: 'applied', processedAt: NOW }])).toEqual([]);
    expect(summary('cancelled')).toEqual({ status: 'completed', emitted: 10, resolved: 4, applied: 4 });
  });
});
