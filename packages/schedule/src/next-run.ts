import { nextCronWallTime } from './cron-match';
import { ScheduleArgumentError } from './errors';
import { firstRunIndexAfter, intervalRun } from './interval';
import type { CronSchedule, IntervalSchedule, Schedule } from './types';
import { instantAt, wallTimeAt } from './zone';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
// Years 0001 to 9999: far beyond any schedule, and where Date and Intl agree.
const MIN_TIME = -62_135_596_800_000;
const MAX_TIME = 253_402_300_799_999;

/**
 * The first run of `schedule` strictly after `after` (epoch ms). Interval schedules need their
 * `anchor` (the schedule's creation time): runs are anchor + k × interval, k ≥ 1, so they never drift.
 * Cron schedules ignore it.
 */
export function nextRun(schedule: Schedule, after: number, anchor?: number): number {
  checkTime('after', after);
  if (schedule.kind === 'cron') return nextCronRun(schedule, after);
  const a = requireAnchor(anchor);
  return intervalRun(schedule, a, firstRunIndexAfter(schedule, a, after));
}

/** How many runs fall in (from, to]: exact, and cheap even over years of a minutely schedule. */
export function countRuns(schedule: Schedule, from: number, to: number, anchor?: number): number {
  checkTime('from', from);
  checkTime('to', to);
  if (to <= from) return 0;
  if (schedule.kind === 'interval') return countIntervalRuns(schedule, requireAnchor(anchor), from, to);
  return countCronRuns(schedule, from, to);
}

function countIntervalRuns(s: IntervalSchedule, anchor: number, from: number, to: number): number {
  return firstRunIndexAfter(s, anchor, to) - firstRunIndexAfter(s, anchor, from);
}

function nextCronRun(s: CronSchedule, after: number): number {
  // No run before the wall minute `after` is in can be later than `after` (wall → instant never goes
  // backwards), so start there. Wall times that map to `after` or earlier (the repeated hour of a
  // fall-back, the start minute) are passed over one by one.
  let wall = Math.floor(wallTimeAt(after, s.timeZone) / MINUTE_MS) * MINUTE_MS;
  for (;;) {
    const match = nextCronWallTime(s.fields, wall);
    const instant = instantAt(match, s.timeZone);
    if (instant > after) return instant;
    wall = match + MINUTE_MS;
  }
}

/**
 * Day by day: croner finds the next day with runs, and that day's runs in the range are counted by
 * arithmetic (a 24 h day) or by mapping each wall time to its instant (a DST day: the wall times of
 * a gap share one instant and count once). See DECISIONS.md, "Counting runs by the day".
 */
function countCronRuns(s: CronSchedule, from: number, to: number): number {
  const { hours, minutes } = s.fields;
  let count = 0;
  let cursor = from;
  let run = nextCronRun(s, from);
  while (run <= to) {
    const midnight = Math.floor(wallTimeAt(run, s.timeZone) / DAY_MS) * DAY_MS;
    const dayStart = instantAt(midnight, s.timeZone);
    const dayEnd = instantAt(midnight + DAY_MS, s.timeZone);
    const until = Math.min(to, dayEnd - 1); // runs in (cursor, until] count (run is one of them)
    if (dayEnd - dayStart !== DAY_MS) {
      let previous: number | undefined;
      for (const h of hours) {
        for (const m of minutes) {
          const at = instantAt(midnight + h * HOUR_MS + m * MINUTE_MS, s.timeZone); // never decreasing
          if (at !== previous && at > cursor && at <= until) count += 1;
          previous = at;
        }
      }
    } else {
      const lo = cursor - dayStart; // ms into the day
      const hi = until - dayStart;
      if (lo < 0 && hi >= DAY_MS - MINUTE_MS) {
        count += hours.length * minutes.length; // the whole day
      } else {
        for (const h of hours) {
          for (const m of minutes) {
            const at = h * HOUR_MS + m * MINUTE_MS;
            if (at > lo && at <= hi) count += 1;
          }
        }
      }
    }
    if (until === to) break;
    // Every run of this day is counted, and the next day's wall times happen after it: look there.
    cursor = until;
    run = instantAt(nextCronWallTime(s.fields, midnight + DAY_MS), s.timeZone);
  }
  return count;
}

function requireAnchor(anchor: number | undefined): number {
  if (anchor === undefined) {
    throw new ScheduleArgumentError(
      'an interval schedule needs its anchor (the time it was created) to place its runs',
    );
  }
  checkTime('anchor', anchor);
  return anchor;
}

function checkTime(name: string, t: number): void {
  if (typeof t !== 'number' || !Number.isFinite(t) || t < MIN_TIME || t > MAX_TIME) {
    throw new ScheduleArgumentError(`${name} must be a time in epoch ms (years 1 to 9999), got ${String(t)}`);
  }
}
