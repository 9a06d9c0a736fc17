import { AbortedError } from '../src/errors';
import { TokenBucket } from '../src/scans/token-bucket';
import { MAX_TIMER_MS, sleep } from '../src/scans/wait';

describe('TokenBucket', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000;
  });

  it('starts empty: the first commands wait for their tokens, so a walk never opens with a burst', () => {
    const bucket = new TokenBucket(1_000, undefined, clock);
    expect(bucket.available()).toBe(0);
    expect(bucket.take(100)).toBe(100); // 100 commands at 1000/s: 100 ms, not at once
    now += 100;
    expect(bucket.take(1)).toBe(1);
  });

  it('holds at most a tenth of a second of its rate, however long it idles', () => {
    const bucket = new TokenBucket(4_000, undefined, clock);
    expect(bucket.capacity).toBe(400);
    now += 60_000;
    expect(bucket.available()).toBe(400);
    expect(bucket.take(400)).toBe(0);
    expect(bucket.take(4)).toBe(1); // then the rate: 4 tokens at 4000/s
  });

  it('takes a burst in milliseconds, and keeps at least one token of capacity for slow rates', () => {
    const bucket = new TokenBucket(1_000, 50, clock);
    now += 10_000;
    expect(bucket.available()).toBe(50);
    const slow = new TokenBucket(2, undefined, clock);
    expect(slow.capacity).toBe(1);
  });

  it('refills with time, never above its capacity', () => {
    const bucket = new TokenBucket(10, 1_000, clock);
    now += 300;
    expect(bucket.available()).toBeCloseTo(3);
    now += 60_000;
    expect(bucket.available()).toBe(10);
  });

  it('keeps the long-run rate: 1000 commands at 100/s take 10 s', () => {
    const bucket = new TokenBucket(100, undefined, clock);
    let sent = 0;
    const start = now;
    while (sent < 1_000) {
      now += bucket.take(10); // the caller sleeps this long, then sends
      sent += 10;
    }
    expect(now - start).toBe(10_000);
  });

  it('a rate change takes effect at once, without a burst: what accrued before stays at the old rate and the capacity', () => {
    const bucket = new TokenBucket(100, undefined, clock);
    now += 50;
    expect(bucket.available()).toBeCloseTo(5); // 50 ms at 100/s
    bucket.setRate(10_000);
    expect(bucket.available()).toBeCloseTo(5); // not 50 ms of the new rate
    now += 10_000;
    expect(bucket.available()).toBe(1_000); // 100 ms of 10,000/s at most
    bucket.setRate(100);
    expect(bucket.available()).toBe(10); // lowered: the capacity of the new rate
    expect(bucket.take(20)).toBe(100); // paced at the new rate
    expect(() => bucket.setRate(0)).toThrow(/positive finite/);
  });

  it('gives sub-1/s rates a capacity of one token', () => {
    const bucket = new TokenBucket(0.5, undefined, clock);
    expect(bucket.take(1)).toBe(2_000);
    now += 60_000;
    expect(bucket.available()).toBe(1);
  });

  it('refuses rates that are not positive and finite', () => {
    expect(() => new TokenBucket(0)).toThrow(/positive finite/);
    expect(() => new TokenBucket(Number.POSITIVE_INFINITY)).toThrow(/positive finite/);
  });
});

describe('sleeping off a token bucket’s debt', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** Whether `promise` has settled after the fake clock moved `ms` on. */
  async function settledAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
    let settled = false;
    promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    await jest.advanceTimersByTimeAsync(ms);
    return settled;
  }

  it('waits in full a wait longer than setTimeout’s maximum: at 1e-7/s a command waits 116 days', async () => {
    const now = 0;
    const bucket = new TokenBucket(1e-7, undefined, () => now);
    const wait = bucket.take(1); // the bucket starts empty: the first command waits its token
    expect(wait).toBe(10_000_000_000); // 1 / 1e-7 s, past 2^31 − 1 ms: Node would fire it after 1 ms
    const slept = sleep(wait);
    expect(await settledAfter(slept, 5_000)).toBe(false);
    expect(await settledAfter(slept, MAX_TIMER_MS)).toBe(false); // one timer's worth is not the whole wait
    expect(await settledAfter(slept, wait - MAX_TIMER_MS - 5_001)).toBe(false);
    expect(await settledAfter(slept, 1)).toBe(true);
  });

  it('a long wait still ends at once on abort', async () => {
    const abort = new AbortController();
    const slept = sleep(3 * MAX_TIMER_MS, abort.signal);
    expect(await settledAfter(slept, MAX_TIMER_MS + 1)).toBe(false);
    abort.abort();
    await expect(slept).rejects.toBeInstanceOf(AbortedError);
    expect(jest.getTimerCount()).toBe(0);
  });
});
