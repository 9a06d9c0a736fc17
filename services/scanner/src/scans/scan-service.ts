import { ScanNotFoundError } from '../errors';
import type { PartitionLag } from '../metrics';
import type { ScanEngine } from './scan-engine';
import type { ScanRequest } from './scan-plan';
import type { ScanStore } from './scan-store';
import { toScanView, type ScanView } from './scan-view';

/** What the HTTP routes need from the scanner; tests give the app a fake. */
export interface ScanService {
  /** Throws InvalidRequestError naming the offending fields, or TooManyScansError. */
  create(request: ScanRequest): ScanView;
  /** Newest first. */
  list(limit: number, offset: number): { scans: ScanView[]; total: number };
  /** Throws ScanNotFoundError. */
  get(id: string): ScanView;
  /** Throws ScanNotFoundError or ScanFinishedError. */
  cancel(id: string): Promise<ScanView>;
}

/** The replica as health checks see it. */
export interface ReplicaHealth {
  /** True once the replica has caught up with the changelog since start. */
  readonly ready: boolean;
  lag(): PartitionLag[];
}

/** ScanService over the engine and the scans database. */
export class EngineScanService implements ScanService {
  constructor(
    private readonly engine: Pick<ScanEngine, 'create' | 'cancel'> & Partial<Pick<ScanEngine, 'pace'>>,
    private readonly store: ScanStore,
    private readonly replica: Pick<ReplicaHealth, 'lag'>,
    private readonly now: () => number = Date.now,
  ) {}

  create(request: ScanRequest): ScanView {
    return this.view(this.engine.create(request).id);
  }

  list(limit: number, offset: number): { scans: ScanView[]; total: number } {
    const lag = this.replica.lag();
    const scans = this.store
      .list(limit, offset)
      .map((s) => toScanView(s, this.store.outcomeCounts(s.id), lag, this.now(), this.engine.pace?.(s.id)));
    return { scans, total: this.store.count() };
  }

  get(id: string): ScanView {
    return this.view(id);
  }

  async cancel(id: string): Promise<ScanView> {
    const scan = await this.engine.cancel(id);
    return this.view(scan.id);
  }

  private view(id: string): ScanView {
    const scan = this.store.get(id);
    if (scan === undefined) throw new ScanNotFoundError(id);
    return toScanView(scan, this.store.outcomeCounts(id), this.replica.lag(), this.now(), this.engine.pace?.(id));
  }
}
