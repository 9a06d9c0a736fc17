// The disk use of scans.sqlite: scans of 100,000 commands each, every command answered, written
// through the scanner's own ScanStore exactly as a scan writes them (record, count, commit, result,
// finish), once with retention off and once with the default kind of retention on. No broker.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { commandIdFor } from '@state-relay/contracts';
import pino from 'pino';
import { table } from './markdown';
import { openScansDatabase, ScanRowsRetention, type ScansDatabase } from '@state-relay/scanner/internal';

const COMMANDS_PER_SCAN = 100_000;
const BATCH = 2_000;
const DAY = 86_400_000;

export interface DiskRun {
  retention: string;
  /** scans.sqlite (database and WAL, after a TRUNCATE checkpoint) after each scan, in MB. */
  sizeMbAfterScan: number[];
}

export interface DiskResult {
  date: string;
  commandsPerScan: number;
  scans: number;
  runs: DiskRun[];
  /** Growth per 100,000 commands with retention off: the last size over the commands written. */
  mbPer100kCommandsWithout: number;
}

function fileMb(database: ScansDatabase, path: string): number {
  database.file.db.pragma('wal_checkpoint(TRUNCATE)');
  const wal = `${path}-wal`;
  const bytes = statSync(path).size + (existsSync(wal) ? statSync(wal).size : 0);
  return Number((bytes / 1e6).toFixed(2));
}

/** One scan's writes: its commands in batches as the walk records, counts and commits them, then a result for each. */
function writeScan(database: ScansDatabase, id: string, at: number): void {
  const store = database.scans;
  store.create(id, { ...DORMANCY_SWEEP, options: {} }, at, at);
  store.markRunning(id, 'walking', at);
  for (let from = 0; from < COMMANDS_PER_SCAN; from += BATCH) {
    const keys = Array.from({ length: BATCH }, (_, i) => `acct-${String((from + i) * 10).padStart(8, '0')}`);
    const extent = { toKey: keys.at(-1)!, walked: BATCH * 10, matched: BATCH };
    store.beginChunk(
      id,
      extent,
      keys.map((key) => ({ key })),
    );
    store.markSent(id, { ...extent, commands: BATCH, sent: BATCH }, BATCH);
    store.commitChunk(id, { cursor: extent.toKey, walked: extent.walked, matched: BATCH, walkMs: 1 });
    store.recordResults(
      keys.map((key, i) => ({
        commandId: commandIdFor(id, key),
        scanId: id,
        key,
        outcome: 'applied' as const,
        version: 2 + (i % 7),
        processedAt: at,
      })),
    );
  }
  store.finish(id, 'completed', at);
}

async function measure(scans: number, retention: { maxAgeMs: number; maxScans: number } | null): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'scans-disk-'));
  const path = join(dir, 'scans.sqlite');
  const database = openScansDatabase(path);
  const logger = pino({ level: 'warn' });
  const start = Date.UTC(2026, 10, 1);
  try {
    const sizes: number[] = [];
    for (let i = 0; i < scans; i++) {
      const at = start + i * DAY; // one scan a day
      writeScan(database, `scan-${i}`, at);
      if (retention) {
        await new ScanRowsRetention(database.scans, logger, { ...retention, intervalMs: DAY, now: () => at }).prune();
      }
      sizes.push(fileMb(database, path));
    }
    return sizes;
  } finally {
    database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function measureScansDisk(scans: number): Promise<DiskResult> {
  const without = await measure(scans, null);
  console.log(`retention off: ${without.join(', ')} MB`);
  const withRetention = await measure(scans, { maxAgeMs: 7 * DAY, maxScans: 1 });
  console.log(`retention on (newest finished scan kept): ${withRetention.join(', ')} MB`);
  return {
    date: new Date().toISOString(),
    commandsPerScan: COMMANDS_PER_SCAN,
    scans,
    runs: [
      { retention: 'off', sizeMbAfterScan: without },
      { retention: 'SCAN_ROWS_MAX_SCANS=1 (rows of the newest finished scan kept)', sizeMbAfterScan: withRetention },
    ],
    mbPer100kCommandsWithout: Number(((without.at(-1)! * 100_000) / (COMMANDS_PER_SCAN * scans)).toFixed(2)),
  };
}

/** The markdown section scanner.md ends with, from scanner-disk.json when it exists. */
export function diskSection(dir: string): string {
  const file = join(dir, 'scanner-disk.json');
  if (!existsSync(file)) return '';
  const r = JSON.parse(readFileSync(file, 'utf8')) as DiskResult;
  const n = (x: number) => x.toLocaleString('en-US');
  const rows = r.runs.map((run) => [run.retention, run.sizeMbAfterScan.map((mb) => `${mb} MB`).join(', ')]);
  return `
## scans.sqlite disk use

${r.scans} scans of ${n(r.commandsPerScan)} commands, one a day, every command answered, written through the
scanner's \`ScanStore\` as a scan writes them (no broker); after each scan, retention ran (when on) and
the file was measured (database and WAL, after a TRUNCATE checkpoint). ${r.date.slice(0, 10)}.

${table([['retention', 'scans.sqlite after each scan'], ...rows])}

Without retention the file grows by about ${r.mbPer100kCommandsWithout} MB per 100,000 commands, for good. With
it, the rows of finished scans past retention are deleted and SQLite reuses their pages: the file
stops growing at about the scans whose rows are kept plus the one being written (retention runs
between scans, so the newest scan is written before the one before it goes). Reproduce: \`pnpm bench:scanner --part disk\`
`;
}
