import { Type, type Static } from '@sinclair/typebox';
import type { ProcessorStatus } from './processor-status';

/** One reading of a processor's cumulative counts and its latency window, as sampled. */
interface Sample {
  /** When the scanner got it (the chart's time axis, the dead-letter minute). */
  at: number;
  /** When the processor read its counts (its `at`): the rates' intervals, free of the reading's own delay. */
  clock: number;
  commands: number;
  applied: number;
  events: number;
  deadLetters: number;
  p50Ms: number | null;
  p99Ms: number | null;
  /** Events alone, short window (eventCommitLatency); undefined from a processor without it. */
  eventP99Ms: number | null | undefined;
}

export const ProcessorPoint = Type.Object({
  at: Type.String({ description: 'End of the interval, ISO-8601' }),
  commitLatencyP50Ms: Type.Union([Type.Number(), Type.Null()], {
    description: 'Event commit latency p50 over the processor’s last 10 s then; null when nothing was committed',
  }),
  commitLatencyP99Ms: Type.Union([Type.Number(), Type.Null()]),
  commandsPerSecond: Type.Number({ description: 'Commands committed per second (every outcome) over the interval' }),
  appliedPerSecond: Type.Number({ description: 'Commands committed with the outcome applied, per second' }),
  eventsPerSecond: Type.Number({ description: 'Events committed per second' }),
});
export type ProcessorPoint = Static<typeof ProcessorPoint>;

/** 5 minutes at one sample a second. */
export const MAX_PROCESSOR_SAMPLES = 300;
const MIN_INTERVAL_MS = 500;

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
const round = (n: number) => Math.round(n * 10) / 10;

/**
 * One processor instance's readings over time, bounded (the oldest goes first), and what the
 * status page charts from them: rates between consecutive readings (at least 500 ms apart). A processor that restarted
 * starts its counts again at 0; that interval shows 0, never a negative rate.
 */
export class ProcessorSeries {
  private readonly samples: Sample[] = [];

  constructor(private readonly maxSamples = MAX_PROCESSOR_SAMPLES) {}

  add(at: number, status: ProcessorStatus): void {
    const clock = Date.parse(status.at);
    this.samples.push({
      at,
      clock: Number.isFinite(clock) ? clock : at,
      commands: sum(status.commands),
      applied: status.commands.applied ?? 0,
      events: sum(status.events),
      deadLetters: status.deadLetters.total,
      p50Ms: status.commitLatency.p50Ms,
      p99Ms: status.commitLatency.p99Ms,
      eventP99Ms: status.eventCommitLatency?.p99Ms,
    });
    if (this.samples.length > this.maxSamples) this.samples.splice(0, this.samples.length - this.maxSamples);
  }

  points(): ProcessorPoint[] {
    const points: ProcessorPoint[] = [];
    let from = 0;
    for (let i = 1; i < this.samples.length; i++) {
      const b = this.samples[i]!;
      // Each rate spans at least MIN_INTERVAL_MS of the processor's clock: two readings close
      // together (one delayed, the next not) would turn one commit's burst into a spike.
      while (from + 1 < i && b.clock - this.samples[from + 1]!.clock >= MIN_INTERVAL_MS) from++;
      const a = this.samples[from]!;
      const seconds = (b.clock - a.clock) / 1000;
      if (seconds < MIN_INTERVAL_MS / 1000) continue;
      const rate = (before: number, after: number) => round((after >= before ? after - before : after) / seconds);
      points.push({
        at: new Date(b.at).toISOString(),
        commitLatencyP50Ms: b.p50Ms,
        commitLatencyP99Ms: b.p99Ms,
        commandsPerSecond: rate(a.commands, b.commands),
        appliedPerSecond: rate(a.applied, b.applied),
        eventsPerSecond: rate(a.events, b.events),
      });
    }
    return points;
  }

  /** The event p99 readings (events only) taken from `from` to `to` (scanner clock), null ones left out. */
  eventP99Between(from: number, to: number): number[] {
    const values: number[] = [];
    for (const s of this.samples)
      if (s.at >= from && s.at <= to && typeof s.eventP99Ms === 'number') values.push(s.eventP99Ms);
    return values;
  }

  /**
   * Dead letters committed over the minute before `now`: the rise of the total from the reading
   * the minute starts from (counting from 0 again after a restart); null with fewer than two readings.
   */
  deadLettersLastMinute(now: number): number | null {
    const since = now - 60_000;
    const start = Math.max(
      0,
      this.samples.findLastIndex((s) => s.at <= since),
    ); // the reading the minute starts from
    const recent = this.samples.slice(start).filter((s) => s.at <= now);
    if (recent.length < 2) return null;
    let n = 0;
    for (let i = 1; i < recent.length; i++) {
      const [a, b] = [recent[i - 1]!.deadLetters, recent[i]!.deadLetters];
      n += b >= a ? b - a : b;
    }
    return n;
  }
}
