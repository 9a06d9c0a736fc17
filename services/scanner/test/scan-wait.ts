import { waitUntil } from '@state-relay/testkit';
import type { ScanRecord } from '../src/scans/scan';
import type { ScanStore } from '../src/scans/scan-store';

/** Resolves with the scan once it is completed, cancelled or failed. */
export function scanFinished(store: ScanStore, id: string, timeoutMs = 20_000): Promise<ScanRecord> {
  return waitUntil(
    () => {
      const s = store.get(id)!;
      return ['completed', 'cancelled', 'failed'].includes(s.status) && s;
    },
    { timeoutMs, intervalMs: 5, message: `scan ${id} to finish` },
  ) as Promise<ScanRecord>;
}
