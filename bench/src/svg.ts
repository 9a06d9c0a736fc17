import type { SweepResult } from './sweeps';
import { sweepLabel } from './sweeps';

const WIDTH = 960;
const PANEL = 200;
const M = { left: 64, right: 16, top: 28, bottom: 30 };
const COLORS = { p99: '#c2410c', p50: '#2563eb', window: '#fde68a', grid: '#e5e7eb', axis: '#374151' };

/**
 * Event latency over time, one panel per sweep mode, hand-drawn SVG (no chart library): p99
 * and p50 per time bucket as polylines (broken where a bucket saw no commit at all, i.e. a
 * stall), the sweep window shaded, latency on a log scale so stalls and baselines both show.
 */
export function latencyChart(results: SweepResult[], rounds: number, subtitle: string): string {
  const height = results.length * PANEL + 40;
  const xMax = Math.max(...results.map((r) => r.timeline.length * (r.bucketMs / 1000)));
  const yMax = niceCeil(Math.max(100, ...results.flatMap((r) => r.timeline.map((b) => (b.n > 0 ? b.max : 0)))));
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${M.left}" y="18" font-size="13" font-weight="bold">Event latency (produce → commit) around each sweep</text>`,
    `<text x="${M.left}" y="32" fill="#6b7280">${escape(subtitle)}</text>`,
  ];
  results.forEach((r, i) => parts.push(panel(r, sweepLabel(r, rounds), 40 + i * PANEL, xMax, yMax)));
  parts.push('</svg>');
  return parts.join('\n');
}

function panel(r: SweepResult, label: string, top: number, xMax: number, yMax: number): string {
  const x0 = M.left;
  const x1 = WIDTH - M.right;
  const y0 = top + M.top;
  const y1 = top + PANEL - M.bottom;
  const x = (t: number) => x0 + ((x1 - x0) * t) / xMax;
  const yMin = 10;
  const y = (ms: number) => y1 - ((y1 - y0) * Math.log10(Math.max(ms, yMin) / yMin)) / Math.log10(yMax / yMin);
  const out: string[] = [];
  const title = `${label}: sweep ${(r.sweepMs / 1000).toFixed(1)} s, p99 ${fmt(r.baseline.p99)} → ${fmt(r.during.p99)} ms, longest task stall ${fmt(r.taskStall.ms)} ms`;
  out.push(`<text x="${x0}" y="${top + 18}" font-weight="bold">${escape(title)}</text>`);
  // The sweep window.
  out.push(
    `<rect x="${x(r.window.start).toFixed(1)}" y="${y0}" width="${Math.max(1, x(r.window.end) - x(r.window.start)).toFixed(1)}" height="${y1 - y0}" fill="${COLORS.window}" opacity="0.6"/>`,
  );
  // Grid and axes.
  for (const ms of logTicks(yMax)) {
    out.push(`<line x1="${x0}" x2="${x1}" y1="${y(ms).toFixed(1)}" y2="${y(ms).toFixed(1)}" stroke="${COLORS.grid}"/>`);
    out.push(
      `<text x="${x0 - 6}" y="${(y(ms) + 4).toFixed(1)}" text-anchor="end" fill="${COLORS.axis}">${ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`}</text>`,
    );
  }
  const step = xMax > 120 ? 20 : xMax > 60 ? 10 : 5;
  for (let t = 0; t <= xMax; t += step) {
    out.push(
      `<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${y1}" y2="${y1 + 4}" stroke="${COLORS.axis}"/>`,
    );
    out.push(`<text x="${x(t).toFixed(1)}" y="${y1 + 16}" text-anchor="middle" fill="${COLORS.axis}">${t} s</text>`);
  }
  out.push(`<line x1="${x0}" x2="${x1}" y1="${y1}" y2="${y1}" stroke="${COLORS.axis}"/>`);
  out.push(`<line x1="${x0}" x2="${x0}" y1="${y0}" y2="${y1}" stroke="${COLORS.axis}"/>`);
  // The series: a new polyline after every bucket without commits.
  for (const [key, width] of [
    ['p50', 1],
    ['p99', 1.6],
  ] as const) {
    let points: string[] = [];
    const flush = () => {
      if (points.length > 1)
        out.push(
          `<polyline fill="none" stroke="${COLORS[key]}" stroke-width="${width}" points="${points.join(' ')}"/>`,
        );
      else if (points.length === 1)
        out.push(
          `<circle r="1.5" fill="${COLORS[key]}" cx="${points[0]!.split(',')[0]}" cy="${points[0]!.split(',')[1]}"/>`,
        );
      points = [];
    };
    for (const b of r.timeline) {
      if (b.n === 0) flush();
      else points.push(`${x(b.t + r.bucketMs / 2000).toFixed(1)},${y(b[key]).toFixed(1)}`);
    }
    flush();
  }
  const lx = x1 - 150;
  const ly = top + 8;
  out.push(
    `<rect x="${lx}" y="${ly + 2}" width="12" height="8" fill="${COLORS.window}"/><text x="${lx + 16}" y="${ly + 10}">sweep</text>`,
  );
  out.push(
    `<line x1="${lx + 56}" x2="${lx + 70}" y1="${ly + 6}" y2="${ly + 6}" stroke="${COLORS.p99}" stroke-width="2"/><text x="${lx + 74}" y="${ly + 10}">p99</text>`,
  );
  out.push(
    `<line x1="${lx + 100}" x2="${lx + 114}" y1="${ly + 6}" y2="${ly + 6}" stroke="${COLORS.p50}" stroke-width="2"/><text x="${lx + 118}" y="${ly + 10}">p50</text>`,
  );
  return out.join('\n');
}

function logTicks(max: number): number[] {
  const ticks: number[] = [];
  for (let d = 1; d <= max; d *= 10) for (const m of [1, 3]) if (d * m <= max && d * m >= 10) ticks.push(d * m);
  return ticks;
}

function niceCeil(v: number): number {
  const d = 10 ** Math.floor(Math.log10(v));
  return [1, 3, 10].map((m) => m * d).find((n) => n >= v) ?? 10 * d;
}

function fmt(ms: number): string {
  return Number.isFinite(ms) ? Math.round(ms).toLocaleString('en-US') : '–';
}

function escape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
