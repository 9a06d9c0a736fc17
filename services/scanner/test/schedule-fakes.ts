import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import { ScanNotFoundError } from '../src/errors';
import type { ScanStatus } from '../src/scans/scan';
import { planScan, type ScanRequest } from '../src/scans/scan-plan';
import type { ScanService } from '../src/scans/scan-service';
import type { ScanView } from '../src/scans/scan-view';
import { openScansDatabase } from '../src/scanner';

/** The scan service as schedules see it: records each created scan; a test moves its status. */
export class FakeScanService implements Pick<ScanService, 'create' | 'get'> {
  readonly created: Array<{ id: string; request: ScanRequest; status: ScanStatus }> = [];

  /** Validates as the engine does (planScan), so a template the rules would reject fails here too. */
  create(request: ScanRequest): ScanView {
    planScan(request, 0, ['mark_dormant', 'close']);
    const scan = { id: `scan-${this.created.length + 1}`, request, status: 'pending' as ScanStatus };
    this.created.push(scan);
    return this.get(scan.id);
  }

  get(id: string): ScanView {
    const scan = this.created.find((s) => s.id === id);
    if (!scan) throw new ScanNotFoundError(id);
    const results = Object.fromEntries(COMMAND_OUTCOMES.map((o) => [o, 0])) as ScanView['counts']['results'];
    return {
      id,
      status: scan.status,
      counts: { scanned: 10, matched: 3, emitted: 0, pending: 0, results },
    } as ScanView;
  }

  finish(id: string, status: ScanStatus = 'completed'): void {
    this.created.find((s) => s.id === id)!.status = status;
  }
}

/** A scans.sqlite in a fresh directory, as the scanner opens it; close() removes it. */
export function tempStores(dir = mkdtempSync(join(tmpdir(), 'schedules-'))) {
  const database = openScansDatabase(join(dir, 'scans.sqlite'));
  return {
    dir,
    scans: database.scans,
    schedules: database.schedules,
    /** The connection, for tests that read or break the tables directly. */
    db: database.file.db,
    file: database.file,
    close: (remove = true) => {
      database.close();
      if (remove) rmSync(dir, { recursive: true, force: true });
    },
  };
}
