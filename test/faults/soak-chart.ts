import type { SoakResult } from './soak';

// The soak as one hand-drawn SVG (no chart library), four panels over the same time axis:
// resident memory per process, event commit latency (p50, p99; log scale), events committed
// per second, commands applied per second. Faults are red lines, sweeps shaded.

const WIDTH = 960;
const PANEL = 170;
const M = { left: 64, right: 120, top: 26, bottom: 24 };
const COLORS = ['#2563eb', '#c2410c', '#059669', '#7c3aed'];

interface Series {
  label: string;
  points: Array<[number, number | null]>;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceCeil(v: number): number {
  const p = 10 ** Math.floor(Math.log10(Math.max(v, 1)));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((c) => c >= v) ?? 10 * p;
}

function panel(title: string, series: Series[], top: number, xMax: number, r: SoakResult, log: boolean): string[] {
  const x0 = M.left;
  const x1 = WIDTH - M.right;
  const y0 = top + M.top;
  const y1 = top + PANEL - M.bottom;
  const values = series.flatMap((s) => s.points.flatMap(([, v]) => (v === null ? [] : [v])));
  const yMax = niceCeil(Math.max(1, ...values) * 1.05);
  const yMin = log ? 1 : 0;
  const x = (t: number) => x0 + ((x1 - x0) * t) / xMax;
  const y = (v: number) =>
    log
      ? y1 - ((y1 - y0) * Math.log10(Math.max(v, yMin) / yMin)) / Math.log10(yMax / yMin)
      : y1 - ((y1 - y0) * (v - yMin)) / (yMax - yMin);
  const out = [`<text x="${x0}" y="${top + 16}" font-weight="bold">${esc(title)}</text>`];
  for (const s of r.sweeps)
    out.push(
      `<rect x="${x(s.startT).toFixed(1)}" y="${y0}" width="${Math.max(1, x(s.endT ?? xMax) - x(s.startT)).toFixed(1)}" height="${y1 - y0}" fill="#fde68a" opacity="0.45"/>`,
    );
  const ticks = log
    ? Array.from({ length: Math.floor(Math.log10(yMax)) + 1 }, (_, i) => 10 ** i)
    : [0, 0.25, 0.5, 0.75, 1].map((f) => yMax * f);
  for (const v of ticks) {
    out.push(`<line x1="${x0}" x2="${x1}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e5e7eb"/>`);
    out.push(
      `<text x="${x0 - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" fill="#374151">${Math.round(v)}</text>`,
    );
  }
  for (const f of r.faults)
    out.push(
      `<line x1="${x(f.t).toFixed(1)}" x2="${x(f.t).toFixed(1)}" y1="${y0}" y2="${y1}" stroke="#dc2626" stroke-dasharray="3 2"/>`,
    );
  const step = niceCeil(xMax / 60 / 8) * 60;
  for (let t = 0; t <= xMax; t += step)
    out.push(`<text x="${x(t).toFixed(1)}" y="${y1 + 15}" text-anchor="middle" fill="#374151">${t / 60} min</text>`);
  out.push(`<line x1="${x0}" x2="${x1}" y1="${y1}" y2="${y1}" stroke="#374151"/>`);
  out.push(`<line x1="${x0}" x2="${x0}" y1="${y0}" y2="${y1}" stroke="#374151"/>`);
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    // A new polyline after every missing point (a process not answering, a window without commits).
    let run: string[] = [];
    const flush = () => {
      if (run.length > 0)
        out.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${run.join(' ')}"/>`);
      run = [];
    };
    for (const [t, v] of s.points) {
      if (v === null) flush();
      else run.push(`${x(t).toFixed(1)},${y(v).toFixed(1)}`);
    }
    flush();
    out.push(`<text x="${x1 + 8}" y="${y0 + 12 + i * 14}" fill="${color}">${esc(s.label)}</text>`);
  });
  return out;
}

export function soakChart(r: SoakResult, subtitle: string): string {
  const xMax = Math.max(60, r.samples[r.samples.length - 1]?.t ?? 60);
  const processes = ['processor-1', 'scanner', 'broker'];
  const panels: Array<[string, Series[], boolean]> = [
    [
      'Resident memory (MiB)',
      processes.map((p) => ({ label: p, points: r.samples.map((s) => [s.t, s.rssMiB[p] ?? null]) })),
      false,
    ],
    [
      'Event commit latency, produce → commit (ms, log scale)',
      [
        { label: 'p99', points: r.samples.map((s) => [s.t, s.p99Ms]) },
        { label: 'p50', points: r.samples.map((s) => [s.t, s.p50Ms]) },
      ],
      true,
    ],
    [
      'Events per second: offered by the load generator, committed by the processor',
      [
        { label: 'committed', points: r.samples.map((s) => [s.t, s.eventsPerSec]) },
        { label: 'offered', points: r.samples.map((s) => [s.t, s.offeredPerSec]) },
      ],
      false,
    ],
    [
      'Commands committed per second (sweeps shaded, faults red)',
      [{ label: 'commands/s', points: r.samples.map((s) => [s.t, s.commandsPerSec]) }],
      false,
    ],
  ];
  const height = panels.length * PANEL + 44;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${M.left}" y="18" font-size="13" font-weight="bold">Soak: memory, latency and rates over time</text>`,
    `<text x="${M.left}" y="34" fill="#6b7280">${esc(subtitle)}</text>`,
    ...panels.flatMap(([title, series, log], i) => panel(title, series, 44 + i * PANEL, xMax, r, log)),
    '</svg>',
    '',
  ].join('\n');
}
