/**
 * How slow a sweep may make events: the event commit p99 it may reach, in milliseconds or as a ratio
 * of the p99 before it started; `off`: no budget (the rate cap and the command-lag pause only).
 * Exactly one property is set.
 */
export interface LatencyBudget {
  p99Ms?: number;
  ratio?: number;
  off?: true;
}

/** The ranges the API, the CLI and SCAN_LATENCY_BUDGET accept. */
export const LATENCY_BUDGET_RANGES = {
  /** Below it the noise of a p99 (its buckets are 4 % wide) reads as a breach. */
  ratio: { minimum: 1.05, maximum: 100 },
  p99Ms: { minimum: 1, maximum: 600_000 },
} as const;

/** The service default when SCAN_LATENCY_BUDGET is unset: 20 % over the baseline, under issue 32's 1.3× goal. */
export const DEFAULT_LATENCY_BUDGET: LatencyBudget = { ratio: 1.2 };

const RATIO = /^(\d+(?:\.\d+)?)x$/;
const MS = /^(\d+(?:\.\d+)?)ms$/;

/**
 * The text form of SCAN_LATENCY_BUDGET and the CLI's --latency-budget: `1.2x` (ratio), `300ms`
 * (p99 in ms) or `off`. Returns a problem (naming the accepted forms) instead of throwing.
 */
export function parseLatencyBudget(text: string): { budget: LatencyBudget } | { problem: string } {
  const t = text.trim();
  if (t === 'off') return { budget: { off: true } };
  const { ratio, p99Ms } = LATENCY_BUDGET_RANGES;
  const r = RATIO.exec(t);
  if (r) {
    const n = Number(r[1]);
    if (n >= ratio.minimum && n <= ratio.maximum) return { budget: { ratio: n } };
    return { problem: `must be a ratio from ${ratio.minimum}x to ${ratio.maximum}x, got "${t}"` };
  }
  const m = MS.exec(t);
  if (m) {
    const n = Number(m[1]);
    if (n >= p99Ms.minimum && n <= p99Ms.maximum) return { budget: { p99Ms: n } };
    return { problem: `must be milliseconds from ${p99Ms.minimum}ms to ${p99Ms.maximum}ms, got "${t}"` };
  }
  return {
    problem:
      `must be a ratio of the event p99 before the scan (e.g. 1.2x), a p99 in milliseconds (e.g. 300ms) ` +
      `or off, got "${t.slice(0, 40)}"`,
  };
}

export function formatLatencyBudget(budget: LatencyBudget): string {
  if (budget.ratio !== undefined) return `${budget.ratio}x`;
  if (budget.p99Ms !== undefined) return `${budget.p99Ms}ms`;
  return 'off';
}

/** The issue with an options.latencyBudget the schema let through: it must set exactly one property. */
export function latencyBudgetIssue(budget: LatencyBudget | undefined): string | undefined {
  if (budget === undefined) return undefined;
  const set = (['p99Ms', 'ratio', 'off'] as const).filter((k) => budget[k] !== undefined);
  return set.length === 1 ? undefined : `give exactly one of p99Ms, ratio or off (got ${set.length})`;
}
