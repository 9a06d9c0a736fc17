/** What a deadline that passes first does: resolve with `fallback`, or reject with `error()`. */
export type OnDeadline<F> = { fallback: F } | { error: () => Error };

/**
 * `promise`, or `onTimeout` once `ms` have passed without it settling. The timer is cleared when
 * `promise` settles first; a `promise` that loses settles unobserved (its rejection is handled here).
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: { error: () => Error }): Promise<T>;
export function withDeadline<T, F>(promise: Promise<T>, ms: number, onTimeout: { fallback: F }): Promise<T | F>;
export function withDeadline<T, F>(promise: Promise<T>, ms: number, onTimeout: OnDeadline<F>): Promise<T | F> {
  return new Promise<T | F>((resolve, reject) => {
    const timer = setTimeout(() => {
      if ('fallback' in onTimeout) resolve(onTimeout.fallback);
      else reject(onTimeout.error());
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
