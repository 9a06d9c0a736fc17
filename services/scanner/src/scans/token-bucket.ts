/**
 * A token bucket for commands per second. `take(n)` debits at once and says how long to wait
 * before using the tokens, so tokens may go negative (a debt the caller sleeps off). The clock is
 * injected (milliseconds, monotonic) so tests drive time by hand. A wait may exceed what one
 * setTimeout can hold: sleep() (wait.ts) waits it in steps.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly ratePerSecond: number,
    /** Burst: at most this many tokens accumulate while idle. One second's worth by default. */
    readonly capacity = Math.max(1, ratePerSecond),
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(ratePerSecond > 0) || !Number.isFinite(ratePerSecond)) {
      throw new RangeError(`ratePerSecond must be a positive finite number, got ${ratePerSecond}`);
    }
    if (!(capacity >= 1)) throw new RangeError(`capacity must be at least 1, got ${capacity}`);
    this.tokens = capacity;
    this.last = now();
  }

  /** Debits `n` tokens; returns the milliseconds to wait before they may be used (0 = now). */
  take(n: number): number {
    if (!(n >= 0)) throw new RangeError(`n must be non-negative, got ${n}`);
    this.refill();
    this.tokens -= n;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.ratePerSecond) * 1000);
  }

  /** Tokens available right now (negative while in debt). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  private refill(): void {
    const t = this.now();
    const elapsed = Math.max(0, t - this.last);
    this.last = t;
    this.tokens = Math.min(this.capacity, this.tokens + (elapsed / 1000) * this.ratePerSecond);
  }
}
