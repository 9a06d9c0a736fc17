// Pure pieces of the latency-budget part (part 6, issue 32): the budget as the scanner takes it,
// the scan's pace over time (GET /scans/:id `pace`, sampled while the sweep runs), and the issue's
// aims judged on a run. No I/O here, so test/repo/bench-latency-budget.test.ts covers it.

/** A scan's `options.latencyBudget`, exactly as services/scanner's schema takes it. */
export type LatencyBudget = { ratio: number } | { p99Ms: number } | { off: true };

/** What limits the paced rate (services/scanner's PACE_LIMITERS). */
export const PACE_LIMITERS = ['ramp', 'budget', 'lag', 'cap'] as const;
export type PaceLimiter = (typeof PACE_LIMITERS)[number];

/** A scan's `pace` in GET /scans/:id: set while it walks and emits, null otherwise. */
export interface Pace {
  rate: number;
  limiter: PaceLimiter;
  budgetP99Ms: number | null;
  baselineP99Ms: number | null;
  eventP99Ms: number | null;
}

/** One poll of GET /scans/:id during the sweep. */
export interface PaceSample {
  /** When the answer arrived (epoch ms). */
  at: number;
  pace: Pace | null;
  /** counts.emitted then. */
  emitted: number;
}

/**
 * `1.2x` → { ratio: 1.2 }, `300ms` → { p99Ms: 300 }, `off` → { off: true }: the forms of the
 * scanner's SCAN_LATENCY_BUDGET and the CLI's --latency-budget, within the scanner's ranges
 * (ratio 1.05 to 100, p99 1 to 600000 ms). Throws on anything else.
 */
export function parseBudget(text: string): LatencyBudget {
  const t = text.trim().toLowerCase();
  if (t === 'off') return { off: true };
  const ratio = /^(\d+(?:\.\d+)?)x$/.exec(t);
  if (ratio) {
    const v = Number(ratio[1]);
    if (v >= 1.05 && v <= 100) return { ratio: v };
  }
  const ms = /^(\d+(?:\.\d+)?)ms$/.exec(t);
  if (ms) {
    const v = Number(ms[1]);
    if (v >= 1 && v <= 600_000) return { p99Ms: v };
  }
  throw new Error(`a latency budget is a ratio (1.05x to 100x), a p99 (1ms to 600000ms) or off; got "${text}"`);
}

/** The inverse of parseBudget: `1.2x`, `300ms`, `off`. */
export function budgetLabel(b: LatencyBudget): string {
  if ('off' in b) return 'off';
  if ('ratio' in b) return `${b.ratio}x`;
  return `${b.p99Ms}ms`;
}

/** The scanner's default (SCAN_LATENCY_BUDGET unset). */
export const DEFAULT_BUDGET = '1.2x';

/** The pace of one scan over its walk, from the samples of GET /scans/:id. */
export interface PaceSummary {
  /** Samples taken, and of them those with a pace (the walk emitting). */
  samples: number;
  paced: number;
  /** Seconds of the walk each limiter held the rate (each sample's limiter until the next sample). */
  secondsBy: Record<PaceLimiter, number>;
  /** The limiter that held it longest (null without any paced sample). */
  mostly: PaceLimiter | null;
  /** The paced rate (commands/s): time-weighted mean, the highest, and the last. */
  rate: { mean: number; max: number; last: number };
  /** Commands emitted per second over the paced samples (first to last). */
  emittedPerSec: number;
  /**
   * Rate cuts: samples whose paced rate is below the previous paced sample's, showing `budget` (a
   * multiplicative decrease on a reading over the budget) or `lag` (the safety net). The limiter stays
   * `budget` through the additive increase after a cut, so its changes would miss later cuts.
   */
  budgetCuts: number;
  lagCuts: number;
  /** The baseline and the budget the pacer held to (ms), as last shown. */
  baselineP99Ms: number | null;
  budgetP99Ms: number | null;
  /** The highest event p99 reading the pacer saw (ms). */
  maxEventP99Ms: number | null;
  /** Per bucket from `origin`: the last pace in it (rate, limiter, event p99), commands emitted per second. */
  timeline: Array<{
    t: number;
    rate: number | null;
    limiter: PaceLimiter | null;
    eventP99Ms: number | null;
    emittedPerSec: number;
  }>;
}

/**
 * Summarizes the samples (any order; sorted by time here). A sample's limiter and rate hold until
 * the next sample, so a slow poll weighs what it saw by the gap after it (the last sample weighs
 * nothing). `origin` (epoch ms, e.g. the scan's creation) starts the timeline's buckets.
 */
export function summarizePace(input: readonly PaceSample[], origin: number, bucketMs = 1000): PaceSummary {
  const samples = [...input].sort((a, b) => a.at - b.at);
  const secondsBy: Record<PaceLimiter, number> = { ramp: 0, budget: 0, lag: 0, cap: 0 };
  let weighted = 0;
  let weight = 0;
  let max = 0;
  let budgetCuts = 0;
  let lagCuts = 0;
  let previousRate: number | null = null;
  let baselineP99Ms: number | null = null;
  let budgetP99Ms: number | null = null;
  let maxEventP99Ms: number | null = null;
  const paced = samples.filter((s) => s.pace !== null);
  for (let i = 0; i < samples.length; i++) {
    const { pace } = samples[i]!;
    if (pace === null) continue;
    const next = samples[i + 1];
    const dt = next ? Math.max(0, next.at - samples[i]!.at) / 1000 : 0;
    secondsBy[pace.limiter] += dt;
    weighted += pace.rate * dt;
    weight += dt;
    max = Math.max(max, pace.rate);
    // A cut: the rate below the previous paced sample's (a halving), by the limiter it shows.
    if (previousRate !== null && pace.rate < previousRate) {
      if (pace.limiter === 'budget') budgetCuts++;
      if (pace.limiter === 'lag') lagCuts++;
    }
    previousRate = pace.rate;
    if (pace.baselineP99Ms !== null) baselineP99Ms = pace.baselineP99Ms;
    if (pace.budgetP99Ms !== null) budgetP99Ms = pace.budgetP99Ms;
    if (pace.eventP99Ms !== null) maxEventP99Ms = Math.max(maxEventP99Ms ?? 0, pace.eventP99Ms);
  }
  const first = paced[0];
  const last = paced[paced.length - 1];
  const span = first && last ? (last.at - first.at) / 1000 : 0;
  const ranked = PACE_LIMITERS.filter((l) => secondsBy[l] > 0).sort((a, b) => secondsBy[b] - secondsBy[a]);
  return {
    samples: samples.length,
    paced: paced.length,
    secondsBy,
    mostly: ranked[0] ?? (last ? last.pace!.limiter : null),
    rate: {
      mean: weight > 0 ? weighted / weight : (last?.pace?.rate ?? 0),
      max,
      last: last?.pace?.rate ?? 0,
    },
    emittedPerSec: span > 0 ? (last!.emitted - first!.emitted) / span : 0,
    budgetCuts,
    lagCuts,
    baselineP99Ms,
    budgetP99Ms,
    maxEventP99Ms,
    timeline: paceTimeline(samples, origin, bucketMs),
  };
}

function paceTimeline(samples: readonly PaceSample[], origin: number, bucketMs: number): PaceSummary['timeline'] {
  if (samples.length === 0) return [];
  const end = samples[samples.length - 1]!.at;
  const count = Math.max(1, Math.ceil((end - origin + 1) / bucketMs));
  const out: PaceSummary['timeline'] = [];
  let emittedBefore = samples.find((s) => s.at >= origin)?.emitted ?? 0;
  for (let i = 0; i < count; i++) {
    const from = origin + i * bucketMs;
    const inBucket = samples.filter((s) => s.at >= from && s.at < from + bucketMs);
    const lastPaced = [...inBucket].reverse().find((s) => s.pace !== null)?.pace ?? null;
    const emittedAfter = inBucket.length ? inBucket[inBucket.length - 1]!.emitted : emittedBefore;
    out.push({
      t: (i * bucketMs) / 1000,
      rate: lastPaced?.rate ?? null,
      limiter: lastPaced?.limiter ?? null,
      eventP99Ms: lastPaced?.eventP99Ms ?? null,
      emittedPerSec: ((emittedAfter - emittedBefore) * 1000) / bucketMs,
    });
    emittedBefore = emittedAfter;
  }
  return out;
}

/** What the budget aims are judged on: one sweep's figures (a SweepResult has them all). */
export interface SweepFigures {
  sweepMs: number;
  baseline: { p99: number };
  during: { p99: number };
  p99Ratio: number;
  /** The longest stall of any single task overlapping the sweep. */
  taskStall: { ms: number };
  /** Cut at its time limit: `sweepMs` is the time to the cut, `projectedMs` the whole sweep at its rate so far. */
  truncated?: { projectedMs: number };
}

/** "4.0 s", or for a sweep cut at its limit "cut at 60.0 s (projected 312.5 s)". */
export function durationText(f: Pick<SweepFigures, 'sweepMs' | 'truncated'>): string {
  const s = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : '∞');
  return f.truncated ? `cut at ${s(f.sweepMs)} (projected ${s(f.truncated.projectedMs)})` : s(f.sweepMs);
}

/** One aim of issue 32, met or not on this run (null: not judged, `note` says why). */
export interface BudgetVerdict {
  name: string;
  aim: string;
  measured: string;
  met: boolean | null;
  note?: string;
}

/** Issue 32's aims: with the default budget p99 ≤ 1.3× baseline and stall ≤ 400 ms; with none, no slower and no worse than chunked. */
export const BUDGET_AIMS = { p99Ratio: 1.3, taskStallMs: 400 } as const;

/**
 * Issue 32's sweep aims, computed from the run: the relay sweep with the default budget, the one
 * with none (`off`), and the in-loop chunked sweep of the same run. A missing sweep leaves its aims
 * unjudged. `offAim` (the run's keys or rate are not the issue's 200,000 / 2,000) adds a note.
 */
export function judgeBudgetAims(
  runs: {
    defaultBudget?: SweepFigures;
    defaultLabel: string;
    off?: SweepFigures;
    chunked?: SweepFigures;
  },
  offAim?: string,
): BudgetVerdict[] {
  const { defaultBudget: d, off, chunked: c, defaultLabel } = runs;
  const note = (missing: string | undefined, cut?: SweepFigures): Partial<BudgetVerdict> => {
    const notes = [
      ...(missing ? [missing] : []),
      ...(cut?.truncated ? ['the sweep was cut at its time limit: its figures cover the part before the cut'] : []),
      ...(!missing && offAim ? [offAim] : []),
    ];
    return notes.length ? { note: notes.join('; ') } : {};
  };
  // A sweep cut at its limit took longer than the limit: slower than chunked if chunked took less, else unknown.
  const offNoSlower = (o: SweepFigures, ch: SweepFigures): boolean | null =>
    o.truncated ? (o.sweepMs > ch.sweepMs ? false : null) : o.sweepMs <= ch.sweepMs;
  const r = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '–');
  const notRun = (what: string) => `no ${what} sweep in this run`;
  return [
    {
      name: `relay, default budget (${defaultLabel}): p99 during the sweep / its baseline p99`,
      aim: `≤ ${BUDGET_AIMS.p99Ratio}`,
      measured: d
        ? `${d.p99Ratio.toFixed(2)} (${r(d.baseline.p99)} → ${r(d.during.p99)} ms; sweep ${durationText(d)})`
        : '–',
      met: d ? d.p99Ratio <= BUDGET_AIMS.p99Ratio : null,
      ...note(d ? undefined : notRun(`${defaultLabel} budget`), d),
    },
    {
      name: `relay, default budget (${defaultLabel}): longest stall of any task during the sweep`,
      aim: `≤ ${BUDGET_AIMS.taskStallMs} ms`,
      measured: d ? `${r(d.taskStall.ms)} ms` : '–',
      met: d ? d.taskStall.ms <= BUDGET_AIMS.taskStallMs : null,
      ...note(d ? undefined : notRun(`${defaultLabel} budget`), d),
    },
    {
      name: 'relay, no budget (off, uncapped): sweep duration vs the in-loop chunked sweep of the same run',
      aim: '≤ chunked',
      measured: off && c ? `${durationText(off)} vs ${durationText(c)}` : '–',
      met: off && c ? offNoSlower(off, c) : null,
      ...note(!off ? notRun('off-budget') : !c ? notRun('chunked') : undefined, off),
    },
    {
      name: 'relay, no budget (off, uncapped): event p99 during the sweep vs the chunked sweep’s',
      aim: '≤ chunked',
      measured: off && c ? `${r(off.during.p99)} vs ${r(c.during.p99)} ms` : '–',
      met: off && c ? off.during.p99 <= c.during.p99 : null,
      ...note(!off ? notRun('off-budget') : !c ? notRun('chunked') : undefined, off),
    },
  ];
}

/** `- **PASS** name: measured (aim …)`, one line per aim. */
export function verdictLines(verdicts: readonly BudgetVerdict[]): string[] {
  return verdicts.map((v) => {
    const word = v.met === null ? 'NOT JUDGED' : v.met ? 'PASS' : 'FAIL';
    return `- **${word}** ${v.name}: ${v.measured} (aim ${v.aim})${v.note ? `; ${v.note}` : ''}`;
  });
}

/** A stretch of the walk held by one limiter: from, to (s from the scan's creation), the paced rate's range in it. */
export interface PaceSegment {
  limiter: PaceLimiter;
  from: number;
  to: number;
  minRate: number;
  maxRate: number;
}

/** The pace timeline as consecutive stretches of one limiter (buckets without a pace end a stretch). */
export function paceSegments(timeline: PaceSummary['timeline'], bucketSec = 1): PaceSegment[] {
  const out: PaceSegment[] = [];
  let cur: PaceSegment | undefined;
  for (const b of timeline) {
    if (b.limiter === null || b.rate === null) {
      cur = undefined;
      continue;
    }
    if (cur && cur.limiter === b.limiter && cur.to === b.t) {
      cur.to = b.t + bucketSec;
      cur.minRate = Math.min(cur.minRate, b.rate);
      cur.maxRate = Math.max(cur.maxRate, b.rate);
    } else {
      cur = { limiter: b.limiter, from: b.t, to: b.t + bucketSec, minRate: b.rate, maxRate: b.rate };
      out.push(cur);
    }
  }
  return out;
}

/** "ramp 0-3 s (50-400/s), budget 3-25 s (200-800/s)". */
export function paceSegmentsLine(segments: readonly PaceSegment[]): string {
  const r = (v: number) => Math.round(v).toLocaleString('en-US');
  return segments
    .map(
      (s) =>
        `${s.limiter} ${s.from}-${s.to} s (${s.minRate === s.maxRate ? r(s.minRate) : `${r(s.minRate)}-${r(s.maxRate)}`}/s)`,
    )
    .join(', ');
}

/** Tightest first: ratios ascending, then p99s in ms ascending, then `off` (the order of the chart's x axis). */
export function budgetRank(label: string): number {
  const b = parseBudget(label);
  if ('off' in b) return Number.MAX_SAFE_INTEGER;
  return 'ratio' in b ? b.ratio : 1_000 + b.p99Ms;
}

/** One processor reading as the scanner last took it (its GET /status `processors.instances[i]`). */
export interface SignalSample {
  reachable: boolean;
  error: string | null;
  /** When the scanner took the reading (ISO); the same reading polled twice counts once. */
  checkedAt: string | null;
}

/** The pacer's signal over a sweep: the scanner's readings of the processor, answered or not and why. */
export interface SignalSummary {
  readings: number;
  answered: number;
  /** Readings that failed, by the scanner's reason (`timeout`, `connection refused`, `HTTP 401`, …). */
  failed: Record<string, number>;
}

/** Distinct readings (by `checkedAt`) of the polled samples, answered or failed by reason. */
export function summarizeSignal(samples: readonly SignalSample[]): SignalSummary {
  const seen = new Set<string>();
  const out: SignalSummary = { readings: 0, answered: 0, failed: {} };
  for (const x of samples) {
    if (x.checkedAt === null || seen.has(x.checkedAt)) continue;
    seen.add(x.checkedAt);
    out.readings++;
    if (x.reachable) out.answered++;
    else {
      const why = x.error ?? 'unknown';
      out.failed[why] = (out.failed[why] ?? 0) + 1;
    }
  }
  return out;
}

/** "52 of 60 answered, failed: timeout 8". */
export function signalLine(s: SignalSummary): string {
  const failed = Object.entries(s.failed);
  return `${s.answered} of ${s.readings} answered${failed.length ? `, failed: ${failed.map(([why, k]) => `${why} ${k}`).join(', ')}` : ''}`;
}

/**
 * How much of a cut sweep was done: the share of the keys walked, or, when the walk ran ahead of
 * the emission, the share of the matches it would find (matched × keys / walked) that were emitted.
 */
export function cutFraction(walked: number, keys: number, matched: number, emitted: number): number {
  if (walked <= 0 || keys <= 0) return 0;
  const expectedMatches = (matched * keys) / walked;
  return Math.min(walked / keys, expectedMatches > 0 ? emitted / expectedMatches : 1);
}
