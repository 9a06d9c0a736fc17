import { TokenBucket } from '../src/scans/token-bucket';

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
