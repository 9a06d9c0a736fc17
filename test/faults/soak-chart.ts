import { lineChart, logTicks, niceCeil, type ChartPanel, type ChartSeries } from '@state-relay/testkit';
import type { Sample, SoakResult } from './soak';

// The soak as one chart, four panels over the same time axis: resident memory per process, event
// commit latency (p50, p99; log scale), events committed per second, commands applied per
// second. Faults are red lines, sweeps shaded.

const COLORS = ['#2563eb', '#c2410c', '#059669', '#7c3aed'];

export function soakChart(r: SoakResult, subtitle: string): string {
  const xMax = Math.max(60, r.samples[r.samples.length - 1]?.t ?? 60);
  const over = (f: (s: Sample) => number | null) => r.samples.map((s) => [s.t, f(s)] as const);
  const panel = (title: string, series: Array<Omit<ChartSeries, 'color'>>, log = false): ChartPanel => {
    const values = series.flatMap((s) => s.points.flatMap(([, v]) => (v === null ? [] : [v])));
    const max = niceCeil(Math.max(1, ...values) * 1.05);
    return {
      title,
      series: series.map((s, i) => ({ ...s, color: COLORS[i % COLORS.length]! })),
      y: {
        min: log ? 1 : 0,
        max,
        log,
        ticks: log ? logTicks(1, max) : [0, 0.25, 0.5, 0.75, 1].map((f) => max * f),
        label: (v) => String(Math.round(v)),
      },
      bands: r.sweeps.map((s) => ({ from: s.startT, to: s.endT ?? xMax })),
      markers: r.faults.map((f) => f.t),
    };
  };
  return lineChart({
    title: 'Soak: memory, latency and rates over time',
    subtitle,
    x: { max: xMax, step: niceCeil(xMax / 60 / 8) * 60, label: (t) => `${t / 60} min` },
    bandLabel: 'sweep',
    markerLabel: 'fault',
    panelHeight: 170,
    panels: [
      panel(
        'Resident memory (MiB)',
        ['processor-1', 'scanner', 'broker'].map((p) => ({ label: p, points: over((s) => s.rssMiB[p] ?? null) })),
      ),
      panel(
        'Event commit latency, produce → commit (ms, log scale)',
        [
          { label: 'p99', points: over((s) => s.p99Ms) },
          { label: 'p50', points: over((s) => s.p50Ms) },
        ],
        true,
      ),
      panel('Events per second: offered by the load generator, committed by the processor', [
        { label: 'committed', points: over((s) => s.eventsPerSec) },
        { label: 'offered', points: over((s) => s.offeredPerSec) },
      ]),
      panel('Commands committed per second (sweeps shaded, faults red)', [
        { label: 'commands/s', points: over((s) => s.commandsPerSec) },
      ]),
    ],
  });
}
