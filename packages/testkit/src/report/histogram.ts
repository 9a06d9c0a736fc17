import { build, type Histogram } from 'hdr-histogram-js';

/** What the benchmarks and the fault tooling say of a set of latencies (ms). */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** HDR histograms count integers: latencies are recorded in microseconds. */
const UNITS_PER_MS = 1_000;

/**
 * Latencies (ms) in bounded memory: an HDR histogram of microseconds with 3 significant digits,
 * so a percentile is within 0.1 % of the exact one whatever the count; count, min, max and mean
 * are exact. Percentiles are nearest-rank: the value p % of the recorded ones are at most.
 */
export class LatencyHistogram {
  private readonly hdr: Histogram = build({ numberOfSignificantValueDigits: 3 });
  private n = 0;
  private sum = 0;
  private lowest = Infinity;
  private highest = -Infinity;

  static of(values: Iterable<number>): LatencyHistogram {
    const h = new LatencyHistogram();
    for (const v of values) h.record(v);
    return h;
  }

  record(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError(`a latency must be a finite number of ms, got ${ms}`);
    // A clock step can make a latency negative: it counts as 0 in the percentiles, as itself in min and mean.
    this.hdr.recordValue(Math.max(0, Math.round(ms * UNITS_PER_MS)));
    this.n++;
    this.sum += ms;
    if (ms < this.lowest) this.lowest = ms;
    if (ms > this.highest) this.highest = ms;
  }

  get count(): number {
    return this.n;
  }

  /** NaN when nothing was recorded, as for min and mean. */
  get max(): number {
    return this.n === 0 ? NaN : this.highest;
  }

  get min(): number {
    return this.n === 0 ? NaN : this.lowest;
  }

  get mean(): number {
    return this.n === 0 ? NaN : this.sum / this.n;
  }

  /** The p-th percentile (0 < p <= 100), never beyond the exact min and max; NaN when empty. */
  percentile(p: number): number {
    if (!(p > 0 && p <= 100)) throw new RangeError(`a percentile is in (0, 100], got ${p}`);
    if (this.n === 0) return NaN;
    const value = this.hdr.getValueAtPercentile(p) / UNITS_PER_MS;
    return Math.min(this.highest, Math.max(this.lowest, value));
  }

  summary(): LatencySummary {
    return { count: this.n, p50: this.percentile(50), p99: this.percentile(99), max: this.max };
  }
}

/**
 * The exact nearest-rank percentile of a short series that is kept anyway (it is written to
 * JSON), where a figure is printed to a precision a histogram would not keep (e.g. a recovery
 * time of 42.9 s). Latency streams go to a LatencyHistogram instead.
 */
export function percentileOf(values: readonly number[], p: number): number {
  if (!(p > 0 && p <= 100)) throw new RangeError(`a percentile is in (0, 100], got ${p}`);
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
