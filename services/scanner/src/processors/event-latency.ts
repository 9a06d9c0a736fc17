import type { LatencyReading, LatencySignal } from '../scans/command-pacer';
import type { ProcessorSampler } from './processor-sampler';

export interface EventLatencySignalOptions {
  /** A reading older than this is no reading (the sampler stopped, no processor answers); default 3 s. */
  maxAgeMs?: number;
  /** The span before a walk its baseline is measured over; default 30 s. */
  baselineMs?: number;
  now?: () => number;
}

/**
 * The processors' event commit p99 as a pacer reads it, from the readings the status page already
 * takes once a second: the worst processor's p99 (a sweep must not hurt any of them). Processors
 * that report no event latency (older than the field) or refuse the connection are left out; none
 * left is no reading. A processor whose reading timed out is too busy to answer its status page:
 * the reading says so (`overloaded`), and a pacer treats it as over its budget.
 */
export class EventLatencySignal implements LatencySignal {
  constructor(
    private readonly sampler: Pick<ProcessorSampler, 'eventLatency' | 'eventP99History'>,
    private readonly options: EventLatencySignalOptions = {},
  ) {}

  latest(): LatencyReading | undefined {
    const tick = this.sampler.eventLatency();
    if (tick === undefined || (tick.p99Ms.length === 0 && tick.timedOut === 0)) return undefined;
    if (this.now() - tick.at > (this.options.maxAgeMs ?? 3_000)) return undefined;
    const values = tick.p99Ms.filter((v): v is number => v !== null);
    return {
      at: tick.at,
      p99Ms: values.length === 0 ? null : Math.max(...values),
      ...(tick.timedOut > 0 && { overloaded: true }),
    };
  }

  /**
   * The event p99 before a walk: per processor the median of its readings over the last
   * `baselineMs` (one slow second does not set it), then the worst processor's. Null without any.
   */
  baseline(): number | null {
    const to = this.now();
    const medians = this.sampler
      .eventP99History(to - (this.options.baselineMs ?? 30_000), to)
      .filter((values) => values.length > 0)
      .map(median);
    return medians.length === 0 ? null : Math.max(...medians);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
