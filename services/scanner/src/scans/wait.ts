import { AbortedError } from '../errors';

/** Sleeps `ms`, or rejects with AbortedError as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new AbortedError('aborted'));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError('aborted'));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Lets pending I/O callbacks and timers run: the walk calls it between chunks. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A wake-up call for a loop that waits for "something changed" (a new scan, results, a cancel). */
export class Signal {
  private waiters: Array<() => void> = [];

  notify(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves on the next notify(), after `timeoutMs`, or when `abort` aborts, whichever is first. */
  wait(timeoutMs: number, abort?: AbortSignal): Promise<void> {
    if (abort?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        abort?.removeEventListener('abort', done);
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      abort?.addEventListener('abort', done, { once: true });
      this.waiters.push(done);
    });
  }
}
