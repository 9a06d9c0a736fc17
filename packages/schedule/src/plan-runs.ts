import { countRuns, nextRun } from './next-run';
import type { Schedule } from './types';

export interface PlanRunsInput {
  schedule: Schedule;
  /** When the schedule was created: interval runs are anchor + k × interval; nothing before it is due. */
  anchor: number;
  /** When the schedule last ran or last skipped (store `now` after every plan with `due > 0`); absent: never. */
  lastRunAt?: number;
  now: number;
  /** A run of this schedule has not finished yet. */
  running: boolean;
}

export interface RunPlan {
  /** Start one run now. Never more than one, however many were due. */
  runNow: boolean;
  /** The first run time strictly after `now`. */
  nextRunAt: number;
  /** Due runs in (lastRunAt, now] that get no run of their own: folded into this run, or skipped. */
  missed: number;
  /** Run times that came due since lastRunAt (0: nothing to do yet). */
  due: number;
  /** The latest of them, which a run now stands for (lateness = now − dueAt); null when none is due. */
  dueAt: number | null;
  /** Runs were due but the previous run is still running: nothing starts (no overlap). */
  skippedForOverlap: boolean;
}

/**
 * The missed-run policy. Whatever came due since the last run (a tick, or days of downtime) is
 * served by at most ONE run now, never a burst; `missed` says how many due times it swallowed.
 * If the schedule's previous run is still running, nothing starts and every due time is skipped.
 */
export function planRuns(input: PlanRunsInput): RunPlan {
  const { schedule, anchor, lastRunAt, now, running } = input;
  const since = lastRunAt === undefined ? anchor : Math.max(lastRunAt, anchor);
  const nextRunAt = nextRun(schedule, Math.max(now, since), anchor); // nothing before the anchor or a stored run is due
  const due = countRuns(schedule, since, now, anchor);
  if (due === 0) return { runNow: false, nextRunAt, missed: 0, due, dueAt: null, skippedForOverlap: false };
  const dueAt = latestRunAtOrBefore(schedule, since, now, anchor);
  if (running) return { runNow: false, nextRunAt, missed: due, due, dueAt, skippedForOverlap: true };
  return { runNow: true, nextRunAt, missed: due - 1, due, dueAt, skippedForOverlap: false };
}

/** The last run time in (since, now], knowing there is one, by bisection on "is there a run in (mid, now]". */
function latestRunAtOrBefore(schedule: Schedule, since: number, now: number, anchor: number): number {
  let lo = since; // invariant: a run lies in (lo, now], none lies in (hi, now]
  let hi = now;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (nextRun(schedule, mid, anchor) <= now) lo = mid;
    else hi = mid;
  }
  return nextRun(schedule, lo, anchor);
}
