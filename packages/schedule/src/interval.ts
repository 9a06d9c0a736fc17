import { durationParts } from '@state-relay/rules';
import type { ScheduleIssue } from './errors';
import type { IntervalSchedule } from './types';
import { instantAt, wallTimeAt } from './zone';

const DAY_MS = 86_400_000;
const MS = { H: 3_600_000, M: 60_000, S: 1_000 } as const;
const MAX_DAYS = 3660; // ten years: keeps every run time a safe integer
const EXAMPLES = 'e.g. "P1D", "P7D", "PT6H", "PT15M", "P1DT12H"';

export interface IntervalParts {
  days: number;
  fixedMs: number;
}

/** The parts of an ISO-8601 interval, or the issue that makes it unusable. */
export function parseInterval(
  interval: string,
  minIntervalMs: number,
): { parts: IntervalParts; issue?: undefined } | { parts?: undefined; issue: ScheduleIssue } {
  const fail = (message: string) => ({ issue: { path: '/interval', message } });
  const parts = durationParts(interval);
  if (parts === 'calendar') {
    return fail(
      `${JSON.stringify(interval)} uses years or months, which have no fixed length; use days or a cron expression`,
    );
  }
  if (parts === 'invalid') {
    return fail(
      `invalid ISO-8601 duration ${JSON.stringify(interval)}; expected whole W, D, H, M, S units, ${EXAMPLES}`,
    );
  }
  const days = parts.weeks * 7 + parts.days;
  const fixedMs = parts.hours * MS.H + parts.minutes * MS.M + parts.seconds * MS.S;
  if (days + fixedMs / DAY_MS > MAX_DAYS) return fail(`${JSON.stringify(interval)} is longer than ${MAX_DAYS} days`);
  if (days * DAY_MS + fixedMs < minIntervalMs) {
    return fail(`${JSON.stringify(interval)} is shorter than the minimum of ${describeMs(minIntervalMs)}`);
  }
  return { parts: { days, fixedMs } };
}

/** A span for a message: in days, hours or minutes when whole, else in s or ms. */
export function describeMs(ms: number): string {
  const whole = (unit: number, name: string) => (ms === unit ? `1 ${name}` : `${ms / unit} ${name}s`);
  if (ms % DAY_MS === 0) return whole(DAY_MS, 'day');
  if (ms % MS.H === 0) return whole(MS.H, 'hour');
  if (ms % MS.M === 0) return whole(MS.M, 'minute');
  if (ms % MS.S === 0) return `${ms / MS.S} s`;
  return `${ms} ms`;
}

/** The k-th run (k ≥ 1): k × days later on the anchor's wall clock, then k × fixedMs of elapsed time. */
export function intervalRun(s: IntervalSchedule, anchor: number, k: number): number {
  if (s.days === 0) return anchor + k * s.fixedMs;
  return instantAt(wallTimeAt(anchor, s.timeZone) + k * s.days * DAY_MS, s.timeZone) + k * s.fixedMs;
}

/** The smallest k ≥ 1 whose run is strictly after `t`. Runs strictly increase with k. */
export function firstRunIndexAfter(s: IntervalSchedule, anchor: number, t: number): number {
  if (s.days === 0) return t < anchor ? 1 : Math.floor((t - anchor) / s.fixedMs) + 1;
  // A wall-clock day is 24 h give or take an offset change, so the estimate is off by at most one or two.
  let k = Math.max(1, Math.floor((t - anchor) / (s.days * DAY_MS + s.fixedMs)));
  while (intervalRun(s, anchor, k) <= t) k++;
  while (k > 1 && intervalRun(s, anchor, k - 1) > t) k--;
  return k;
}
