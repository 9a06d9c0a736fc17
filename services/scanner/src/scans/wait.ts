import { AbortedError } from '../errors';

/** setTimeout's longest delay (2^31 − 1 ms): Node fires a longer one after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Sleeps `ms` (in timer-sized steps when longer than MAX_TIMER_MS), or rejects with AbortedError as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new AbortedError('aborted'));
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError('aborted'));
    };
    const wait = (left: number) => {
      const step = Math.min(left, MAX_TIMER_MS);
      timer = setTimeout(() => {
        if (left > step) return wait(left - step);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, step);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    wait(Math.max(0, ms));
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
