import { AbortedError } from '../src/errors';
import { TokenBucket } from '../src/scans/token-bucket';
import { MAX_TIMER_MS, sleep } from '../src/scans/wait';

describe('TokenBucket', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000;
  });

  it('lets a full second’s burst through at once, then paces at the rate', () => {
    const bucket = new TokenBucket(10, undefined, clock);
    expect(bucket.take(10)).toBe(0);
    expect(bucket.take(1)).toBe(100); // one token at 10/s
    expect(bucket.take(4)).toBe(500); // in debt: 5 tokens owed
  });

  it('refills with time, never above its capacity', () => {
    const bucket = new TokenBucket(10, 10, clock);
    bucket.take(10);
    now += 300;
    expect(bucket.available()).toBeCloseTo(3);
    now += 60_000;
    expect(bucket.available()).toBe(10);
  });

  it('keeps the long-run rate: 1000 commands at 100/s take about 9 s after the first burst', () => {
    const bucket = new TokenBucket(100, undefined, clock);
    let sent = 0;
    const start = now;
    while (sent < 1_000) {
      now += bucket.take(10); // the caller sleeps this long, then sends
      sent += 10;
    }
    expect(now - start).toBe(9_000);
  });

  it('gives sub-1/s rates a burst of one', () => {
    const bucket = new TokenBucket(0.5, undefined, clock);
    expect(bucket.take(1)).toBe(0);
    expect(bucket.take(1)).toBe(2_000);
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

  it('waits in full a wait longer than setTimeout’s maximum: at 1e-7/s the second command waits 116 days', async () => {
    const now = 0;
    const bucket = new TokenBucket(1e-7, undefined, () => now);
    expect(bucket.take(1)).toBe(0);
    const wait = bucket.take(1);
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
