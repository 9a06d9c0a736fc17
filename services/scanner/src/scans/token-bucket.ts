/** Default burst: a tenth of a second of the rate, so a walk never lands a second's worth at once. */
export const DEFAULT_BURST_MS = 100;

/**
 * A token bucket for commands per second. `take(n)` debits at once and says how long to wait
 * before using the tokens, so tokens may go negative (a debt the caller sleeps off). It starts
 * empty and holds at most `burstMs` of the current rate (at least one token), so neither the start
 * nor an idle stretch nor a rate change lets a burst through: a processor's cold code never gets a
 * second's worth of commands at once. The clock is injected (milliseconds, monotonic) so tests
 * drive time by hand. A wait may exceed what one setTimeout can hold: sleep() (wait.ts) waits it
 * in steps.
 */
export class TokenBucket {
  private tokens = 0;
  private last: number;
  private rate: number;

  constructor(
    ratePerSecond: number,
    /** At most this many milliseconds of the rate accumulate while idle. */
    readonly burstMs = DEFAULT_BURST_MS,
    private readonly now: () => number = () => performance.now(),
  ) {
    checkRate(ratePerSecond);
    if (!(burstMs > 0) || !Number.isFinite(burstMs)) throw new RangeError(`burstMs must be positive, got ${burstMs}`);
    this.rate = ratePerSecond;
    this.last = now();
  }

  get ratePerSecond(): number {
    return this.rate;
  }

  /** Tokens it holds at most: `burstMs` of the current rate, at least one. */
  get capacity(): number {
    return Math.max(1, (this.rate * this.burstMs) / 1000);
  }

  /**
   * A new rate from now on: what accrued so far accrued at the old rate, and the bucket never holds
   * more than `burstMs` of the new one, so a rate going up does not release a burst.
   */
  setRate(ratePerSecond: number): void {
    checkRate(ratePerSecond);
    this.refill();
    this.rate = ratePerSecond;
    this.tokens = Math.min(this.capacity, this.tokens);
  }

  /** Debits `n` tokens; returns the milliseconds to wait before they may be used (0 = now). */
  take(n: number): number {
    if (!(n >= 0)) throw new RangeError(`n must be non-negative, got ${n}`);
    this.refill();
    this.tokens -= n;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.rate) * 1000);
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
    this.tokens = Math.min(this.capacity, this.tokens + (elapsed / 1000) * this.rate);
  }
}

function checkRate(ratePerSecond: number): void {
  if (!(ratePerSecond > 0) || !Number.isFinite(ratePerSecond)) {
    throw new RangeError(`ratePerSecond must be a positive finite number, got ${ratePerSecond}`);
  }
}
