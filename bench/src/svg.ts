import { lineChart, logTicks, niceCeil } from './lib';
import type { SweepResult } from './sweeps';
import { sweepLabel } from './sweeps';

/**
 * Event latency over time, one panel per sweep mode: p99 and p50 per time bucket (broken where
 * a bucket saw no commit at all, i.e. a stall), the sweep window shaded, latency on a log scale
 * so stalls and baselines both show.
 */
export function latencyChart(results: SweepResult[], rounds: number, subtitle: string): string {
  const xMax = Math.max(...results.map((r) => r.timeline.length * (r.bucketMs / 1000)));
  const yMax = niceCeil(Math.max(100, ...results.flatMap((r) => r.timeline.map((b) => (b.n > 0 ? b.max : 0)))), [1, 3]);
  return lineChart({
    title: 'Event latency (produce → commit) around each sweep',
    subtitle,
    x: { max: xMax, step: xMax > 120 ? 20 : xMax > 60 ? 10 : 5, label: (t) => `${t} s` },
    bandLabel: 'sweep',
    panelHeight: 200,
    panels: results.map((r) => {
      const series = (key: 'p50' | 'p99') =>
        r.timeline.map((b) => [b.t + r.bucketMs / 2000, b.n > 0 ? b[key] : null] as const);
      return {
        title:
          `${sweepLabel(r, rounds)}: sweep ${(r.sweepMs / 1000).toFixed(1)} s, p99 ${fmt(r.baseline.p99)} → ` +
          `${fmt(r.during.p99)} ms, longest task stall ${fmt(r.taskStall.ms)} ms`,
        y: {
          min: 10,
          max: yMax,
          log: true,
          ticks: logTicks(10, yMax, [1, 3]),
          label: (ms) => (ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`),
        },
        bands: [{ from: r.window.start, to: r.window.end }],
        // p99 drawn last, over p50.
        series: [
          { label: 'p50', color: '#2563eb', width: 1, points: series('p50') },
          { label: 'p99', color: '#c2410c', width: 1.6, points: series('p99') },
        ],
      };
    }),
  });
}

function fmt(ms: number): string {
  return Number.isFinite(ms) ? Math.round(ms).toLocaleString('en-US') : '–';
}
