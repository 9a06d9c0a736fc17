// Line charts as hand-written SVG (no chart library): panels stacked over one x axis, each with
// its series, shaded x ranges (bands) and vertical dashed markers, a legend on the right.

export interface ChartSeries {
  label: string;
  color: string;
  /** Stroke width (default 1.5). */
  width?: number;
  /** [x, y] in axis units; a null y breaks the line (no data there). */
  points: ReadonlyArray<readonly [number, number | null]>;
}

export interface ChartAxis {
  ticks: readonly number[];
  label(value: number): string;
}

export interface ChartPanel {
  title: string;
  series: ChartSeries[];
  y: ChartAxis & { min: number; max: number; log?: boolean };
  /** Shaded x ranges, e.g. sweeps. */
  bands?: ReadonlyArray<{ from: number; to: number }>;
  /** x of vertical dashed lines, e.g. faults. */
  markers?: readonly number[];
}

export interface LineChart {
  title: string;
  subtitle: string;
  /** The x axis from 0 to `max`, a tick every `step`. */
  x: { max: number; step: number; label(value: number): string };
  panels: ChartPanel[];
  /** What a band and a marker stand for, in each panel's legend. */
  bandLabel?: string;
  markerLabel?: string;
  panelHeight?: number;
}

const WIDTH = 960;
const HEADER = 44;
const M = { left: 64, right: 120, top: 26, bottom: 26 };
const COLORS = { band: '#fde68a', marker: '#dc2626', grid: '#e5e7eb', axis: '#374151', subtitle: '#6b7280' };

export function lineChart(chart: LineChart): string {
  const panelHeight = chart.panelHeight ?? 180;
  const height = chart.panels.length * panelHeight + HEADER;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${M.left}" y="18" font-size="13" font-weight="bold">${escape(chart.title)}</text>`,
    `<text x="${M.left}" y="34" fill="${COLORS.subtitle}">${escape(chart.subtitle)}</text>`,
    ...chart.panels.flatMap((p, i) => panel(chart, p, HEADER + i * panelHeight, panelHeight)),
    '</svg>',
    '',
  ].join('\n');
}

function panel(chart: LineChart, p: ChartPanel, top: number, height: number): string[] {
  const x0 = M.left;
  const x1 = WIDTH - M.right;
  const y0 = top + M.top;
  const y1 = top + height - M.bottom;
  const { min, max, log } = p.y;
  const x = (v: number) => f(x0 + ((x1 - x0) * v) / chart.x.max);
  const y = (v: number) =>
    f(
      log
        ? y1 - ((y1 - y0) * Math.log10(Math.max(v, min) / min)) / Math.log10(max / min)
        : y1 - ((y1 - y0) * (v - min)) / (max - min),
    );
  const out = [`<text x="${x0}" y="${top + 16}" font-weight="bold">${escape(p.title)}</text>`];
  for (const b of p.bands ?? []) {
    const width = Math.max(1, ((x1 - x0) * (b.to - b.from)) / chart.x.max);
    out.push(
      `<rect x="${x(b.from)}" y="${y0}" width="${f(width)}" height="${y1 - y0}" fill="${COLORS.band}" opacity="0.5"/>`,
    );
  }
  for (const v of p.y.ticks) {
    out.push(`<line x1="${x0}" x2="${x1}" y1="${y(v)}" y2="${y(v)}" stroke="${COLORS.grid}"/>`);
    out.push(
      `<text x="${x0 - 6}" y="${y(v)}" dy="4" text-anchor="end" fill="${COLORS.axis}">${escape(p.y.label(v))}</text>`,
    );
  }
  for (const t of p.markers ?? [])
    out.push(
      `<line x1="${x(t)}" x2="${x(t)}" y1="${y0}" y2="${y1}" stroke="${COLORS.marker}" stroke-dasharray="3 2"/>`,
    );
  for (let t = 0; t <= chart.x.max; t += chart.x.step) {
    out.push(`<line x1="${x(t)}" x2="${x(t)}" y1="${y1}" y2="${y1 + 4}" stroke="${COLORS.axis}"/>`);
    out.push(
      `<text x="${x(t)}" y="${y1 + 16}" text-anchor="middle" fill="${COLORS.axis}">${escape(chart.x.label(t))}</text>`,
    );
  }
  out.push(`<line x1="${x0}" x2="${x1}" y1="${y1}" y2="${y1}" stroke="${COLORS.axis}"/>`);
  out.push(`<line x1="${x0}" x2="${x0}" y1="${y0}" y2="${y1}" stroke="${COLORS.axis}"/>`);
  for (const s of p.series) out.push(...polylines(s, x, y));
  // The legend: each series in its colour, then what the bands and markers stand for.
  const line =
    (color: string, extra = '') =>
    (ly: number) =>
      `<line x1="${x1 + 8}" x2="${x1 + 22}" y1="${ly - 4}" y2="${ly - 4}" stroke="${color}" stroke-width="2"${extra}/>`;
  const legend = p.series.map((s) => ({ label: s.label, color: s.color, swatch: line(s.color) }));
  if (p.bands?.length && chart.bandLabel)
    legend.push({
      label: chart.bandLabel,
      color: COLORS.axis,
      swatch: (ly) => `<rect x="${x1 + 8}" y="${ly - 8}" width="14" height="8" fill="${COLORS.band}"/>`,
    });
  if (p.markers?.length && chart.markerLabel)
    legend.push({
      label: chart.markerLabel,
      color: COLORS.marker,
      swatch: line(COLORS.marker, ' stroke-dasharray="3 2"'),
    });
  legend.forEach((e, i) => {
    const ly = y0 + 12 + i * 14;
    out.push(`${e.swatch(ly)}<text x="${x1 + 26}" y="${ly}" fill="${e.color}">${escape(e.label)}</text>`);
  });
  return out;
}

/** One polyline per run of points without a gap; a lone point as a dot. */
function polylines(s: ChartSeries, x: (v: number) => string, y: (v: number) => string): string[] {
  const out: string[] = [];
  let run: Array<[string, string]> = [];
  const flush = () => {
    if (run.length > 1)
      out.push(
        `<polyline fill="none" stroke="${s.color}" stroke-width="${s.width ?? 1.5}" points="${run.map((p) => p.join(',')).join(' ')}"/>`,
      );
    else if (run.length === 1) out.push(`<circle r="1.5" fill="${s.color}" cx="${run[0]![0]}" cy="${run[0]![1]}"/>`);
    run = [];
  };
  for (const [t, v] of s.points) {
    if (v === null || !Number.isFinite(v)) flush();
    else run.push([x(t), y(v)]);
  }
  flush();
  return out;
}

/** The smallest of `steps` × a power of ten that is at least `v` (1 at the least): a round axis end. */
export function niceCeil(v: number, steps: readonly number[] = [1, 2, 2.5, 5, 10]): number {
  const d = 10 ** Math.floor(Math.log10(Math.max(v, 1)));
  return steps.map((m) => m * d).find((c) => c >= v) ?? 10 * d;
}

/** Ticks of a log axis: `mantissas` × each power of ten, within [min, max]. */
export function logTicks(min: number, max: number, mantissas: readonly number[] = [1]): number[] {
  const ticks: number[] = [];
  for (let d = 1; d <= max; d *= 10) for (const m of mantissas) if (d * m >= min && d * m <= max) ticks.push(d * m);
  return ticks;
}

const f = (n: number) => n.toFixed(1);

function escape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
