import { lineChart, logTicks, niceCeil } from './lib';
import { PACE_LIMITERS } from './latency-budget';
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

/**
 * Part 6 (issue 32): sweep duration, event p99 during / baseline and the longest task stall
 * against the latency budget, one point per relay sweep (uncapped), the chunked in-loop sweep of
 * the same run as a flat line, the issue's aims dashed.
 */
export function budgetChart(chunked: SweepResult, relays: SweepResult[], subtitle: string): string {
  const labels = relays.map((r) => r.relay?.budget ?? '?');
  const xs = (f: (r: SweepResult) => number) => relays.map((r, i) => [i + 1, f(r)] as const);
  const flat = (v: number) =>
    [
      [0.5, v],
      [relays.length + 0.5, v],
    ] as const;
  const linear = (max: number, unit: (v: number) => string) => {
    const top = niceCeil(Math.max(max, 1e-9));
    return { min: 0, max: top, ticks: [0, top / 2, top], label: unit };
  };
  const seconds = (v: number) => `${Number((v / 1000).toFixed(1))} s`;
  const relayColor = '#c2410c';
  const chunkColor = '#2563eb';
  const aimColor = '#6b7280';
  return lineChart({
    title: 'Relay sweep against its latency budget (uncapped), next to the chunked in-loop sweep',
    subtitle,
    x: { max: relays.length + 1, step: 1, label: (i) => labels[i - 1] ?? '' },
    panelHeight: 170,
    panels: [
      {
        title:
          'sweep duration (scan created → every command answered, or the cut at the limit; chunked: armed → last change committed)',
        y: linear(
          Math.max(
            chunked.sweepMs,
            ...relays.map((r) => r.sweepMs),
            ...relays.map((r) => r.truncated?.projectedMs ?? 0).filter(Number.isFinite),
          ),
          seconds,
        ),
        series: [
          { label: 'chunked', color: chunkColor, width: 1, points: flat(chunked.sweepMs) },
          { label: 'relay', color: relayColor, width: 1.8, points: xs((r) => r.sweepMs) },
          // A sweep cut at its time limit: where it was cut (on the relay line) and its projected duration.
          {
            label: 'projected (cut)',
            color: '#9333ea',
            width: 1,
            points: relays.map((r, i) => [i + 1, r.truncated ? r.truncated.projectedMs : null] as const),
          },
        ],
      },
      {
        title: 'event p99 during the sweep / baseline p99',
        y: linear(Math.max(1.3, chunked.p99Ratio, ...relays.map((r) => r.p99Ratio)), (v) => `${Number(v.toFixed(2))}×`),
        series: [
          { label: 'aim 1.3×', color: aimColor, width: 1, points: flat(1.3) },
          { label: 'chunked', color: chunkColor, width: 1, points: flat(chunked.p99Ratio) },
          { label: 'relay', color: relayColor, width: 1.8, points: xs((r) => r.p99Ratio) },
        ],
      },
      {
        title: 'longest stall of any one task during the sweep',
        y: linear(
          Math.max(400, chunked.taskStall.ms, ...relays.map((r) => r.taskStall.ms)),
          (v) => `${Math.round(v)} ms`,
        ),
        series: [
          { label: 'aim 400 ms', color: aimColor, width: 1, points: flat(400) },
          { label: 'chunked', color: chunkColor, width: 1, points: flat(chunked.taskStall.ms) },
          { label: 'relay', color: relayColor, width: 1.8, points: xs((r) => r.taskStall.ms) },
        ],
      },
    ],
  });
}

/** Part 6: each relay sweep's paced rate (GET /scans/:id `pace.rate`) and the commands it emitted per second, over time. */
export function paceChart(relays: SweepResult[], subtitle: string): string {
  const xMax = Math.max(5, ...relays.map((r) => r.relay?.pace.timeline.length ?? 0));
  // An uncapped scan's pace climbs to the scanner's 1,000,000/s cap: the axis follows what was
  // emitted (twice the most in a second) and the paced rate is clipped to it.
  const top = niceCeil(
    Math.max(
      100,
      2 * Math.max(0, ...relays.flatMap((r) => (r.relay?.pace.timeline ?? []).map((b) => b.emittedPerSec))),
    ),
  );
  return lineChart({
    title: 'Paced command rate over each relay sweep (seconds from the scan’s creation)',
    subtitle,
    x: { max: xMax, step: xMax > 120 ? 20 : xMax > 60 ? 10 : 5, label: (t) => `${t} s` },
    panelHeight: 150,
    panels: relays.map((r) => {
      const t = r.relay?.pace.timeline ?? [];
      const p = r.relay?.pace;
      return {
        title:
          `budget ${r.relay?.budget ?? '?'}: sweep ${(r.sweepMs / 1000).toFixed(1)} s, ` +
          `held by ${
            p
              ? PACE_LIMITERS.filter((l) => p.secondsBy[l] > 0)
                  .map((l) => `${l} ${p.secondsBy[l].toFixed(1)} s`)
                  .join(', ')
              : '–'
          }`,
        y: {
          min: 0,
          max: top,
          ticks: [0, top / 2, top],
          label: (v: number) => `${Math.round(v).toLocaleString('en-US')}/s`,
        },
        series: [
          {
            label: 'emitted/s',
            color: '#2563eb',
            width: 1,
            points: t.map((b) => [b.t + 0.5, b.emittedPerSec] as const),
          },
          {
            label: 'paced rate',
            color: '#c2410c',
            width: 1.6,
            points: t.map((b) => [b.t + 0.5, b.rate === null ? null : Math.min(b.rate, top)] as const),
          },
        ],
      };
    }),
  });
}
