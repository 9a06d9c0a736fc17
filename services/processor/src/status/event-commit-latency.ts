import type { CommitReport } from '../extension';
import { CommitLatencyWindow, type LatencyPercentiles } from './commit-latency-window';

/**
 * Seconds the events-only window spans (it holds the current second and the two before it): short,
 * so a sweep that slows events shows within a second or two, long enough for a p99 at a few hundred
 * events a second.
 */
export const EVENT_LATENCY_WINDOW_SECONDS = 3;

/**
 * Event commit latency alone, over a short window: what the scanner paces a sweep by. The
 * `commitLatency` window counts both inputs, and a command's latency includes its wait on the
 * commands topic, so a sweep would read its own queue as the events' pain. Fed from each committed
 * unit's report (the records' timestamps per input topic).
 */
export class EventCommitLatency {
  private readonly window: CommitLatencyWindow;

  constructor(
    private readonly eventsTopic: string,
    windowSeconds = EVENT_LATENCY_WINDOW_SECONDS,
  ) {
    this.window = new CommitLatencyWindow(windowSeconds);
  }

  /** A unit committed: its events' latencies join the window (its commands do not). */
  observe(report: Pick<CommitReport, 'committedAt' | 'inputs'>): void {
    const stamps = report.inputs.get(this.eventsTopic);
    if (stamps === undefined || stamps.length === 0) return;
    this.window.record(
      report.committedAt,
      stamps.map((t) => Math.max(0, report.committedAt - t)),
    );
  }

  percentiles(nowMs: number): LatencyPercentiles {
    return this.window.percentiles(nowMs);
  }
}
