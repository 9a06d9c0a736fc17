import { lineChart, logTicks, niceCeil, type LineChart } from '../../src/report/svg-chart';

const chart: LineChart = {
  title: 'Event latency <over> time',
  subtitle: '200,000 keys & 2,000 events/s',
  x: { max: 60, step: 20, label: (t) => `${t} s` },
  bandLabel: 'sweep',
  markerLabel: 'fault',
  panels: [
    {
      title: 'a. blocking in-loop',
      y: {
        min: 10,
        max: 3_000,
        log: true,
        ticks: logTicks(10, 3_000, [1, 3]),
        label: (v) => (v >= 1000 ? `${v / 1000} s` : `${v} ms`),
      },
      bands: [{ from: 20, to: 35 }],
      series: [
        {
          label: 'p99',
          color: '#c2410c',
          width: 1.6,
          points: [
            [1, 40],
            [2, 2_500],
            [3, null],
            [4, 50],
            [5, 60],
          ],
        },
        {
          label: 'p50',
          color: '#2563eb',
          points: [
            [1, 20],
            [2, null],
            [3, 25],
            [4, null],
          ],
        },
      ],
    },
    {
      title: 'Resident memory (MiB)',
      y: { min: 0, max: 400, ticks: [0, 100, 200, 300, 400], label: (v) => String(v) },
      markers: [30],
      series: [
        {
          label: 'processor-1',
          color: '#059669',
          points: [
            [0, 100],
            [60, 300],
          ],
        },
      ],
    },
  ],
};

describe('lineChart', () => {
  const svg = lineChart(chart);

  it('is one SVG document with the title and subtitle, escaped', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('>Event latency &lt;over&gt; time</text>');
    expect(svg).toContain('>200,000 keys &amp; 2,000 events/s</text>');
  });

  it('shows every panel title, every axis label and every series in the legend', () => {
    for (const text of ['a. blocking in-loop', 'Resident memory (MiB)', 'p99', 'p50', 'processor-1'])
      expect(svg).toContain(`>${text}</text>`);
    for (const label of ['0 s', '20 s', '40 s', '60 s', '10 ms', '30 ms', '100 ms', '300 ms', '1 s', '3 s', '400'])
      expect(svg).toContain(`>${label}</text>`);
  });

  it('names the bands and markers in the legend of the panels that have them', () => {
    expect(svg.match(/>sweep<\/text>/g)).toHaveLength(1);
    expect(svg.match(/>fault<\/text>/g)).toHaveLength(1);
    expect(svg.match(/opacity="0.5"/g)).toHaveLength(1);
    expect(svg.match(/stroke-dasharray="3 2"\/>/g)).toHaveLength(2); // the marker and its legend swatch
  });

  it('breaks a series where it has no value, and shows a lone value as a dot', () => {
    const p99 = svg.match(/<polyline[^>]*stroke="#c2410c"[^>]*>/g) ?? [];
    expect(p99.map((l) => /points="([^"]*)"/.exec(l)![1]!.split(' ').length)).toEqual([2, 2]);
    expect(svg.match(/<circle[^>]*fill="#2563eb"/g)).toHaveLength(2);
  });
});

describe('axis helpers', () => {
  it('rounds an axis end up to a round number', () => {
    expect([niceCeil(0.4), niceCeil(7), niceCeil(180), niceCeil(2_600), niceCeil(2_600, [1, 3, 10])]).toEqual([
      1, 10, 200, 5_000, 3_000,
    ]);
  });

  it('puts log ticks at the chosen mantissas of each power of ten', () => {
    expect(logTicks(10, 3_000, [1, 3])).toEqual([10, 30, 100, 300, 1_000, 3_000]);
    expect(logTicks(1, 500)).toEqual([1, 10, 100]);
  });
});
