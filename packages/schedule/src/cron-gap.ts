import type { ScheduleIssue } from './errors';
import { describeMs } from './interval';
import type { CronFields } from './types';

const MINUTE_MS = 60_000;
const DAY_MINUTES = 1440;
// The Gregorian calendar (months, leap days, weekdays) repeats every 400 years: 146,097 days, whole weeks.
const CYCLE_DAYS = 146_097;
const CYCLE_START = { year: 2000, dayOfWeek: 6 }; // 2000-01-01 was a Saturday

/** The issue when two runs of `cron` can come closer than `minIntervalMs`, as `interval` is checked. */
export function cronRunsTooOften(cron: string, f: CronFields, minIntervalMs: number): ScheduleIssue | undefined {
  if (minIntervalMs <= MINUTE_MS) return undefined; // no two runs are closer than a minute
  const gap = shortestCronGapMs(f);
  if (gap >= minIntervalMs) return undefined;
  const minimum = describeMs(minIntervalMs);
  return {
    path: '/cron',
    message: `${JSON.stringify(cron)} runs ${describeMs(gap)} apart, less than the minimum of ${minimum}`,
  };
}

/**
 * The shortest time between two consecutive runs, in ms of wall-clock time (as for interval days:
 * on the day clocks go forward, the gap across the change is shorter by the shift). Exact: gaps
 * within a day come from the hour × minute lists, gaps across days from the run days of one
 * 400-year cycle, which are walked only when such a gap could be the shortest.
 */
export function shortestCronGapMs(f: CronFields): number {
  const times = f.hours.flatMap((h) => f.minutes.map((m) => h * 60 + m)); // ascending
  let shortest = Number.POSITIVE_INFINITY;
  for (let i = 1; i < times.length; i++) shortest = Math.min(shortest, times[i]! - times[i - 1]!);
  // From a day's last run to the first run of the next run day, `days` later.
  const overnight = DAY_MINUTES - (times.at(-1)! - times[0]!);
  if (overnight < shortest) {
    const days = fewestDaysBetweenRunDays(f);
    if (days !== undefined) shortest = Math.min(shortest, overnight + (days - 1) * DAY_MINUTES);
  }
  return shortest * MINUTE_MS;
}

/** The fewest days from one run day to the next, or undefined when fewer than two days ever run. */
function fewestDaysBetweenRunDays(f: CronFields): number | undefined {
  const months = new Set(f.months);
  const daysOfMonth = new Set(f.daysOfMonth);
  const daysOfWeek = new Set(f.daysOfWeek);
  const either = f.daysOfMonthRestricted && f.daysOfWeekRestricted; // Vixie cron: OR, else AND
  let { year, dayOfWeek } = CYCLE_START;
  let [month, day] = [1, 1];
  let first: number | undefined;
  let last: number | undefined;
  let fewest = Number.POSITIVE_INFINITY;
  for (let n = 0; n < CYCLE_DAYS && fewest > 1; n++) {
    const dom = daysOfMonth.has(day);
    const dow = daysOfWeek.has(dayOfWeek);
    if (months.has(month) && (either ? dom || dow : dom && dow)) {
      if (last !== undefined) fewest = Math.min(fewest, n - last);
      first ??= n;
      last = n;
    }
    dayOfWeek = (dayOfWeek + 1) % 7;
    if (++day > daysIn(year, month)) {
      day = 1;
      if (++month > 12) [month, year] = [1, year + 1];
    }
  }
  if (first === undefined || last === undefined) return undefined;
  if (fewest > 1) fewest = Math.min(fewest, first + CYCLE_DAYS - last); // into the next cycle
  return fewest;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
