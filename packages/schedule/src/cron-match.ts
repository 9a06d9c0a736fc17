import type { CronFields } from './types';

const MAX_STEPS = 100_000; // far more than any valid expression needs (Feb 29 on a Monday: ~30 years)

/** Whether a civil date is a day the expression runs on (Vixie cron's day-of-month/day-of-week rule). */
export function cronDayMatches(f: CronFields, wall: number): boolean {
  const d = new Date(wall);
  if (!f.months.includes(d.getUTCMonth() + 1)) return false;
  const dom = f.daysOfMonth.includes(d.getUTCDate());
  const dow = f.daysOfWeek.includes(d.getUTCDay());
  // Both restricted: either may match. Otherwise the unrestricted one allows every day anyway.
  return f.daysOfMonthRestricted && f.daysOfWeekRestricted ? dom || dow : dom && dow;
}

/** The first wall time ≥ `wall` (whole minutes) that the expression matches, in civil time, no zone. */
export function nextCronWallTime(f: CronFields, wall: number): number {
  let t = Math.ceil(wall / 60_000) * 60_000;
  for (let i = 0; i < MAX_STEPS; i++) {
    const d = new Date(t);
    const [y, mo, day, h, min] = [
      d.getUTCFullYear(),
      d.getUTCMonth(),
      d.getUTCDate(),
      d.getUTCHours(),
      d.getUTCMinutes(),
    ];
    if (!f.months.includes(mo + 1)) {
      t = Date.UTC(y, mo + 1, 1);
    } else if (!cronDayMatches(f, t)) {
      t = Date.UTC(y, mo, day + 1);
    } else if (!f.hours.includes(h)) {
      const nextHour = f.hours.find((v) => v > h);
      t = nextHour === undefined ? Date.UTC(y, mo, day + 1) : Date.UTC(y, mo, day, nextHour);
    } else {
      const nextMinute = f.minutes.find((v) => v >= min);
      if (nextMinute === min) return t;
      t = nextMinute === undefined ? Date.UTC(y, mo, day, h + 1) : Date.UTC(y, mo, day, h, nextMinute);
    }
  }
  throw new Error(`no cron match within ${MAX_STEPS} steps`); // unreachable for an expression parseCron accepted
}
