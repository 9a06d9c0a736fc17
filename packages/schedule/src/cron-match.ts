import { Cron } from 'croner';
import { ScheduleArgumentError } from './errors';
import type { CronFields } from './types';

// croner finds the matching times, but only in civil time: it runs in UTC, on "wall times" (the
// local date and time written as if it were UTC, see zone.ts), and zone.ts maps them to instants.
// Why not croner's own `timezone`: it treats a pattern whose hour or minute is a wildcard, step,
// list or range as an "interval job", which skips wall times in a spring-forward gap (`15 * * * *`
// has no run for 02:15 in Berlin) and runs both occurrences of a repeated time (`0 * * * *` runs
// at 02:00 CEST and again at 02:00 CET). The documented rules (gap → the first instant after it,
// repeated → its first occurrence, for every expression and for calendar-day intervals alike) are
// zone.ts's instantAt.
//
// croner never sees the user's text either. Its syntax is not this API's: it reads more (seconds,
// years, L, W, #, ?, +) and in one place less (`5/20` only behind its sloppyRanges option). So
// parseCron validates the text with its own messages, and croner gets the expanded value lists.

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
