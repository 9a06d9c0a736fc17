import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import { ScanFinishedError, ScanNotFoundError } from '../src/errors';
import type { ScanRecord } from '../src/scans/scan';
import { planScan, type ScanRequest } from '../src/scans/scan-plan';
import type { ScanService } from '../src/scans/scan-service';
import { toScanView, type ScanView } from '../src/scans/scan-view';

/** The clock of the route tests: every scan is created at this instant. */
export const NOW = Date.UTC(2026, 10, 1);
export const outcomes = Object.fromEntries(COMMAND_OUTCOMES.map((o) => [o, 0])) as ScanView['counts']['results'];

/** The scan service as the routes see it, in memory: validation is the real planScan. */
export class FakeScans implements ScanService {
  readonly records = new Map<string, ScanRecord>();
  create(request: ScanRequest): ScanView {
    const { spec, asOf } = planScan(request, NOW, ['mark_dormant', 'close']);
    const id = `scan-${this.records.size + 1}`;
    this.records.set(id, {
      id,
      status: 'pending',
      phase: null,
      spec,
      asOf,
      cursor: null,
      walkDone: false,
      inflight: null,
      scanned: 0,
      matched: 0,
      emitted: 0,
      resolved: 0,
      backoffMs: 0,
      walkMs: 0,
      replicaRows: null,
      createdAt: NOW,
      startedAt: null,
      finishedAt: null,
      error: null,
    });
    return this.get(id);
  }
  list(limit: number, offset: number) {
    const all = [...this.records.keys()].reverse().map((id) => this.get(id));
    return { scans: all.slice(offset, offset + limit), total: all.length };
  }
  get(id: string): ScanView {
    const r = this.records.get(id);
    if (!r) throw new ScanNotFoundError(id);
    return toScanView(r, outcomes, [{ partition: 0, lag: 0 }], NOW);
  }
  async cancel(id: string): Promise<ScanView> {
    const r = this.records.get(id);
    if (!r) throw new ScanNotFoundError(id);
    if (r.status !== 'pending' && r.status !== 'running') throw new ScanFinishedError(id, r.status);
    r.status = 'cancelled';
    return this.get(id);
  }
}
