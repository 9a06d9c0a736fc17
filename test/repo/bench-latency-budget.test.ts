import {
  budgetLabel,
  budgetRank,
  cutFraction,
  durationText,
  judgeBudgetAims,
  paceSegments,
  paceSegmentsLine,
  parseBudget,
  summarizePace,
  verdictLines,
  signalLine,
  summarizeSignal,
  type Pace,
  type PaceSample,
  type SweepFigures,
} from '../../bench/src/latency-budget';
import { parseOptions, UsageError } from '../../bench/src/options';

// Part 6 of `pnpm bench` (issue 32): the budget as the scanner takes it, the pace of a scan
// summarized from GET /scans/:id samples, and the aims judged from a run's figures.

describe('parseBudget / budgetLabel', () => {
  it('takes the three forms of SCAN_LATENCY_BUDGET and gives them back', () => {
    expect(parseBudget('1.2x')).toEqual({ ratio: 1.2 });
    expect(parseBudget(' 2X ')).toEqual({ ratio: 2 });
    expect(parseBudget('300ms')).toEqual({ p99Ms: 300 });
    expect(parseBudget('off')).toEqual({ off: true });
    for (const b of ['1.2x', '1.5x', '2x', '300ms', 'off']) expect(budgetLabel(parseBudget(b))).toBe(b);
  });

  it('refuses what the scanner would refuse', () => {
    for (const bad of ['1x', '1.04x', '101x', '0ms', '600001ms', '1.2', 'none', '', '-2x'])
      expect(() => parseBudget(bad)).toThrow(/latency budget/);
  });
});

const pace = (rate: number, limiter: Pace['limiter'], eventP99Ms: number | null = 100): Pace => ({
  rate,
  limiter,
  budgetP99Ms: 120,
  baselineP99Ms: 100,
  eventP99Ms,
});

describe('summarizePace', () => {
  const t0 = 1_000_000;
  // Created at t0; pending 0.2 s; ramp 50 → 400/s over 1.8 s; a budget cut; additive increase; done.
  const samples: PaceSample[] = [
    { at: t0 + 100, pace: null, emitted: 0 },
    { at: t0 + 200, pace: pace(50, 'ramp'), emitted: 0 },
    { at: t0 + 700, pace: pace(100, 'ramp'), emitted: 40 },
    { at: t0 + 1200, pace: pace(200, 'ramp'), emitted: 100 },
    { at: t0 + 2000, pace: pace(100, 'budget', 150), emitted: 250 },
    { at: t0 + 3000, pace: pace(220, 'budget'), emitted: 460 },
    { at: t0 + 4000, pace: pace(240, 'budget'), emitted: 690 },
    { at: t0 + 4500, pace: null, emitted: 800 },
  ];

  it('weighs each limiter by the time until the next sample', () => {
    const s = summarizePace([...samples].reverse(), t0);
    expect(s.samples).toBe(8);
    expect(s.paced).toBe(6);
    expect(s.secondsBy.ramp).toBeCloseTo(1.8);
    expect(s.secondsBy.budget).toBeCloseTo(2.5);
    expect(s.secondsBy.lag).toBe(0);
    expect(s.secondsBy.cap).toBe(0);
    expect(s.mostly).toBe('budget');
    expect(s.budgetCuts).toBe(1);
    expect(s.lagCuts).toBe(0);
    expect(s.rate.max).toBe(240);
    expect(s.rate.last).toBe(240);
    // (50·0.5 + 100·0.5 + 200·0.8 + 100·1 + 220·1 + 240·0.5) / 4.3
    expect(s.rate.mean).toBeCloseTo((25 + 50 + 160 + 100 + 220 + 120) / 4.3);
    // first paced sample (0 emitted) to the last (690) over 3.8 s
    expect(s.emittedPerSec).toBeCloseTo(690 / 3.8);
    expect(s.maxEventP99Ms).toBe(150);
    expect(s.budgetP99Ms).toBe(120);
    expect(s.baselineP99Ms).toBe(100);
  });

  it('buckets the rate over time from the origin, with the emitted commands per second', () => {
    const s = summarizePace(samples, t0);
    expect(s.timeline.map((b) => b.t)).toEqual([0, 1, 2, 3, 4]);
    expect(s.timeline.map((b) => b.rate)).toEqual([100, 200, 100, 220, 240]);
    expect(s.timeline.map((b) => b.limiter)).toEqual(['ramp', 'ramp', 'budget', 'budget', 'budget']);
    expect(s.timeline.map((b) => b.emittedPerSec)).toEqual([40, 60, 150, 210, 340]);
    expect(paceSegments(s.timeline)).toEqual([
      { limiter: 'ramp', from: 0, to: 2, minRate: 100, maxRate: 200 },
      { limiter: 'budget', from: 2, to: 5, minRate: 100, maxRate: 240 },
    ]);
    expect(paceSegmentsLine(paceSegments(s.timeline))).toBe('ramp 0-2 s (100-200/s), budget 2-5 s (100-240/s)');
  });

  it('counts a cut where the rate drops, by the limiter shown, and a pause ends a stretch', () => {
    const s = summarizePace(
      [
        { at: 0, pace: pace(100, 'budget'), emitted: 0 },
        { at: 500, pace: pace(50, 'budget'), emitted: 50 },
        { at: 700, pace: pace(60, 'budget'), emitted: 60 },
        { at: 1000, pace: pace(30, 'lag'), emitted: 100 },
        { at: 1500, pace: pace(15, 'budget'), emitted: 110 },
        { at: 2000, pace: null, emitted: 120 },
        { at: 3500, pace: pace(15, 'budget'), emitted: 120 },
      ],
      0,
    );
    expect(s.budgetCuts).toBe(2);
    expect(s.lagCuts).toBe(1);
    expect(paceSegments(s.timeline).map((x) => [x.limiter, x.from, x.to])).toEqual([
      ['budget', 0, 2],
      ['budget', 3, 4],
    ]);
  });

  it('has nothing to say without samples or without a pace', () => {
    const none = summarizePace([], 0);
    expect(none).toMatchObject({ samples: 0, paced: 0, mostly: null, emittedPerSec: 0, timeline: [] });
    const unpaced = summarizePace([{ at: 10, pace: null, emitted: 0 }], 0);
    expect(unpaced).toMatchObject({ paced: 0, mostly: null, rate: { mean: 0, max: 0, last: 0 } });
    expect(paceSegments(unpaced.timeline)).toEqual([]);
  });
});

const sweep = (sweepMs: number, base: number, during: number, stall: number): SweepFigures => ({
  sweepMs,
  baseline: { p99: base },
  during: { p99: during },
  p99Ratio: during / base,
  taskStall: { ms: stall },
});

describe('judgeBudgetAims', () => {
  it('passes a run that holds every aim, at the bounds', () => {
    const v = judgeBudgetAims({
      defaultLabel: '1.2x',
      defaultBudget: sweep(30_000, 200, 260, 400),
      off: sweep(4_000, 200, 900, 600),
      chunked: sweep(4_000, 210, 900, 300),
    });
    expect(v.map((x) => x.met)).toEqual([true, true, true, true]);
    expect(v[0]!.measured).toBe('1.30 (200 → 260 ms; sweep 30.0 s)');
    expect(v[1]!.measured).toBe('400 ms');
    expect(v[2]!.measured).toBe('4.0 s vs 4.0 s');
    expect(v[3]!.measured).toBe('900 vs 900 ms');
  });

  it('fails each aim on its own figure', () => {
    const v = judgeBudgetAims({
      defaultLabel: '1.2x',
      defaultBudget: sweep(30_000, 200, 262, 401),
      off: sweep(4_100, 200, 901, 100),
      chunked: sweep(4_000, 200, 900, 100),
    });
    expect(v.map((x) => x.met)).toEqual([false, false, false, false]);
    expect(verdictLines(v).every((l) => l.startsWith('- **FAIL** '))).toBe(true);
  });

  it('leaves an aim unjudged when its sweep did not run, and notes an off-aim size', () => {
    const v = judgeBudgetAims(
      { defaultLabel: '1.2x', chunked: sweep(4_000, 200, 900, 300) },
      'indicative: 20,000 keys',
    );
    expect(v.map((x) => x.met)).toEqual([null, null, null, null]);
    expect(v[0]!.note).toBe('no 1.2x budget sweep in this run');
    expect(v[2]!.note).toBe('no off-budget sweep in this run');
    const lines = verdictLines(v);
    expect(lines[0]).toBe(
      '- **NOT JUDGED** relay, default budget (1.2x): p99 during the sweep / its baseline p99: – (aim ≤ 1.3); no 1.2x budget sweep in this run',
    );
    const judged = judgeBudgetAims(
      {
        defaultLabel: '1.2x',
        defaultBudget: sweep(1, 100, 100, 0),
        off: sweep(1, 1, 1, 0),
        chunked: sweep(2, 1, 2, 0),
      },
      'indicative: 20,000 keys',
    );
    expect(judged.map((x) => x.met)).toEqual([true, true, true, true]);
    expect(verdictLines(judged)[0]).toMatch(/^- \*\*PASS\*\* .*; indicative: 20,000 keys$/);
  });
});

describe('pnpm bench options of part 6', () => {
  it('--part budget runs part 6 alone; part 6 is in the default run', () => {
    expect(parseOptions([]).parts).toContain('budget');
    const o = parseOptions(['--part', 'budget']);
    expect(o.parts).toEqual(['budget']);
    expect(o.budgets).toEqual(['1.2x', '1.5x', '2x', 'off']);
    expect(o.budgetMaxLag).toBe(10_000);
    expect(o.relayBudget).toBeUndefined();
  });

  it('--budgets and --budget-max-lag size part 6 only; --relay-budget changes part 2', () => {
    const o = parseOptions(['--budgets', '2X,off,300ms', '--budget-max-lag', '5000']);
    expect(o.budgets).toEqual(['2x', 'off', '300ms']);
    expect(o.budgetMaxLag).toBe(5_000);
    expect(o.label).toBe('default');
    const r = parseOptions(['--relay-budget', 'off']);
    expect(r.relayBudget).toBe('off');
    expect(r.label).toBe('custom');
  });

  it('refuses a bad budget or a repeated one', () => {
    expect(() => parseOptions(['--budgets', '1.2x,1x'])).toThrow(UsageError);
    expect(() => parseOptions(['--budgets', 'off,off'])).toThrow(UsageError);
    expect(() => parseOptions(['--relay-budget', 'fast'])).toThrow(UsageError);
    expect(() => parseOptions(['--part', 'budgets'])).toThrow(UsageError);
  });
});

describe('budgetRank', () => {
  it('orders budgets tightest first, off last', () => {
    const labels = ['off', '2x', '300ms', '1.2x', '1.5x', '50ms'];
    expect([...labels].sort((a, b) => budgetRank(a) - budgetRank(b))).toEqual([
      '1.2x',
      '1.5x',
      '2x',
      '50ms',
      '300ms',
      'off',
    ]);
  });
});

describe('a sweep cut at its time limit', () => {
  const cut = (sweepMs: number, projectedMs: number, base = 200, during = 220, stall = 100): SweepFigures => ({
    ...sweep(sweepMs, base, during, stall),
    truncated: { projectedMs },
  });

  it('says so in its duration', () => {
    expect(durationText(sweep(4_000, 1, 1, 0))).toBe('4.0 s');
    expect(durationText(cut(60_000, 312_500))).toBe('cut at 60.0 s (projected 312.5 s)');
    expect(durationText(cut(60_000, Infinity))).toBe('cut at 60.0 s (projected ∞)');
  });

  it('judges its p99 and stall on the part before the cut, with a note', () => {
    const v = judgeBudgetAims({
      defaultLabel: '1.2x',
      defaultBudget: cut(60_000, 300_000),
      chunked: sweep(4_000, 1, 1, 0),
    });
    expect(v[0]!.met).toBe(true);
    expect(v[1]!.met).toBe(true);
    expect(v[0]!.measured).toBe('1.10 (200 → 220 ms; sweep cut at 60.0 s (projected 300.0 s))');
    expect(v[0]!.note).toMatch(/cut at its time limit/);
  });

  it('is slower than a chunked sweep that took less than the cut, and unjudged against a longer one', () => {
    const slower = judgeBudgetAims({ defaultLabel: '1.2x', off: cut(60_000, 90_000), chunked: sweep(4_000, 1, 1, 0) });
    expect(slower[2]!.met).toBe(false);
    expect(slower[2]!.measured).toBe('cut at 60.0 s (projected 90.0 s) vs 4.0 s');
    const unknown = judgeBudgetAims({
      defaultLabel: '1.2x',
      off: cut(60_000, 90_000),
      chunked: sweep(70_000, 1, 1, 0),
    });
    expect(unknown[2]!.met).toBeNull();
  });
});

describe('summarizeSignal', () => {
  it('counts each reading of the scanner once, failed ones by reason', () => {
    const s = summarizeSignal([
      { reachable: true, error: null, checkedAt: 'a' },
      { reachable: true, error: null, checkedAt: 'a' },
      { reachable: false, error: 'timeout', checkedAt: 'b' },
      { reachable: false, error: 'timeout', checkedAt: 'c' },
      { reachable: false, error: 'HTTP 401', checkedAt: 'd' },
      { reachable: false, error: null, checkedAt: null },
    ]);
    expect(s).toEqual({ readings: 4, answered: 1, failed: { timeout: 2, 'HTTP 401': 1 } });
    expect(signalLine(s)).toBe('1 of 4 answered, failed: timeout 2, HTTP 401 1');
    expect(signalLine(summarizeSignal([]))).toBe('0 of 0 answered');
  });
});

describe('cutFraction', () => {
  it('is the share of the keys walked while the emission keeps up with the walk', () => {
    expect(cutFraction(50_000, 200_000, 12_000, 12_000)).toBeCloseTo(0.25);
  });

  it('is the share of the expected matches emitted when the walk ran ahead', () => {
    // walked everything, 5,000 matches, 4,000 emitted
    expect(cutFraction(20_000, 20_000, 5_000, 4_000)).toBeCloseTo(0.8);
  });

  it('is 0 before any walk, and walk-only without matches', () => {
    expect(cutFraction(0, 20_000, 0, 0)).toBe(0);
    expect(cutFraction(10_000, 20_000, 0, 0)).toBeCloseTo(0.5);
  });
});
