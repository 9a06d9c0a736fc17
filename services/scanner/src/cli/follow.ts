import type { ScanView } from '../scans/scan-view';
import type { ScannerClient } from './client';
import { FINISHED, type ProgressReporter } from './progress';

export interface Followed {
  /** The last state read. */
  scan: ScanView;
  /** The signal stopped the following (Ctrl-C) before the scan finished. */
  interrupted: boolean;
}

/**
 * Polls a scan until it finishes, showing each read on `progress`, or until `signal` aborts: then
 * it returns at once with the last state read (the poll in flight is dropped).
 */
export async function followScan(
  client: Pick<ScannerClient, 'getScan'>,
  first: ScanView,
  progress: ProgressReporter,
  signal: AbortSignal,
  pollMs: number,
): Promise<Followed> {
  let scan = first;
  try {
    for (;;) {
      progress.update(scan);
      if (FINISHED.has(scan.status)) return { scan, interrupted: false };
      if (!(await sleep(pollMs, signal))) return { scan, interrupted: true };
      try {
        scan = await client.getScan(scan.id, signal);
      } catch (err) {
        if (signal.aborted) return { scan, interrupted: true };
        throw err;
      }
    }
  } finally {
    progress.end(); // also before an API error's message
  }
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (slept: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(slept);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
