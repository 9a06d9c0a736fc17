import { Cron } from 'croner';
import { ScheduleArgumentError } from './errors';
import type { CronFields } from './types';

// croner matches wall times (see zone.ts) in UTC, not through its own `timezone`, and gets the
// expanded value lists, never the user's text; zone.ts maps each match to an instant. See DECISIONS.md.

const MINUTE_MS = 60_000;
// The scanner parses every schedule again on every tick, so matchers are kept by pattern (a few
// hundred µs to build); the fields object of one parse finds its matcher without building the key.
const CACHE_SIZE = 1000;
const matchers = new Map<string, Cron>();
const matcherOfFields = new WeakMap<CronFields, Cron>();

/** The first wall time ≥ `wall` (whole minutes) that the expression matches, in civil time, no zone. */
export function nextCronWallTime(f: CronFields, wall: number): number {
  const start = Math.ceil(wall / MINUTE_MS) * MINUTE_MS;
  // croner's nextRun is strictly after its argument, in whole seconds: from 1 ms before, `start` itself can match.
  const next = matcherFor(f).nextRun(new Date(start - 1));
  if (next === null) {
    throw new ScheduleArgumentError(`no run of this cron expression between ${iso(start)} and the year 10000`);
  }
  return next.getTime();
}

function matcherFor(f: CronFields): Cron {
  const known = matcherOfFields.get(f);
  if (known !== undefined) return known;
  // Vixie cron ORs the day fields only when both are restricted; croner ORs them unless
  // day-of-month is a literal `*` (the lists below never are), so say which one explicitly.
  const domAndDow = !(f.daysOfMonthRestricted && f.daysOfWeekRestricted);
  const pattern = [f.minutes, f.hours, f.daysOfMonth, f.months, f.daysOfWeek].map((v) => v.join(',')).join(' ');
  const key = `${pattern}|${domAndDow}`;
  let matcher = matchers.get(key);
  if (matcher === undefined) {
    // Seconds 0; years spelled out, because with a `*` year croner gives up at the year 3000.
    matcher = new Cron(`0 ${pattern} 1-9999`, { mode: '7-part', utcOffset: 0, domAndDow });
    if (matchers.size >= CACHE_SIZE) matchers.delete(matchers.keys().next().value as string);
    matchers.set(key, matcher);
  }
  matcherOfFields.set(f, matcher);
  return matcher;
}

const iso = (t: number) => new Date(t).toISOString();
