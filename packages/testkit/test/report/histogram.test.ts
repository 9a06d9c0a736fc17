import fc from 'fast-check';
import { LatencyHistogram, percentileOf } from '../../src/report/histogram';

/** The exact nearest-rank percentile: the oracle the histogram is held to. */
function exact(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
}

const latencies = fc.array(fc.double({ min: 0, max: 120_000, noNaN: true }), { minLength: 1, maxLength: 3_000 });
const percentiles = [1, 50, 90, 99, 99.9, 100];

describe('LatencyHistogram', () => {
  it('gives every percentile within 0.1 % (and a microsecond) of the sorted array, on random latencies', () => {
    fc.assert(
      fc.property(latencies, (values) => {
        const h = LatencyHistogram.of(values);
        for (const p of percentiles) {
          const want = exact(values, p);
          expect(Math.abs(h.percentile(p) - want)).toBeLessThanOrEqual(want * 0.001 + 0.001);
        }
      }),
    );
  });

  it('keeps count, min, max and mean exact', () => {
    fc.assert(
      fc.property(latencies, (values) => {
        const h = LatencyHistogram.of(values);
        expect(h.count).toBe(values.length);
        expect(h.max).toBe(Math.max(...values));
        expect(h.min).toBe(Math.min(...values));
        expect(h.mean).toBeCloseTo(values.reduce((a, b) => a + b, 0) / values.length, 6);
      }),
    );
  });

  it('prints whole-millisecond latencies under half a second as the sorted array does', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 2_000 }), (values) => {
        const { p50, p99, max } = LatencyHistogram.of(values).summary();
        expect([Math.round(p50), Math.round(p99), max]).toEqual([
          exact(values, 50),
          exact(values, 99),
          exact(values, 100),
        ]);
      }),
    );
  });

  it('stays as precise over a long series spanning six orders of magnitude', () => {
    const values = Array.from({ length: 300_000 }, (_, i) => 0.1 * 1.00005 ** i);
    const h = LatencyHistogram.of(values);
    for (const p of percentiles) {
      const want = exact(values, p);
      expect(Math.abs(h.percentile(p) - want)).toBeLessThanOrEqual(want * 0.001 + 0.001);
    }
    expect(h.max).toBe(values.at(-1));
  });

  it('is empty as NaN, and refuses what is no latency or no percentile', () => {
    const h = new LatencyHistogram();
    expect(h.summary()).toEqual({ count: 0, p50: NaN, p99: NaN, max: NaN });
    expect(() => h.record(NaN)).toThrow(RangeError);
    expect(() => h.percentile(0)).toThrow(/in \(0, 100\]/);
  });
});

describe('percentileOf', () => {
  it('is the exact nearest-rank percentile of a short series', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 300_000 }), { minLength: 1, maxLength: 200 }), (values) => {
        for (const p of percentiles) expect(percentileOf(values, p)).toBe(exact(values, p));
      }),
    );
    expect(percentileOf([], 50)).toBeNaN();
  });
});
