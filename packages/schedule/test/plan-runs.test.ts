import { parseSchedule, planRuns, type Schedule } from '../src';
import { at } from './helpers';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * A scheduler like the scanner's: ticks with an injected clock, starts a run when the plan says
 * so, and stores `now` as lastRunAt after every plan that had something due.
 */
function scheduler(schedule: Schedule, anchor: number) {
  let lastRunAt: number | undefined;
  const started: number[] = [];
  const plans: ReturnType<typeof planRuns>[] = [];
  return {
    started,
    plans,
    tick(now: number, running = false) {
      const plan = planRuns({ schedule, anchor, lastRunAt, now, running });
      plans.push(plan);
      if (plan.due > 0) lastRunAt = now;
      if (plan.runNow) started.push(now);
      return plan;
    },
  };
}

describe('planRuns: the missed-run policy', () => {
  const anchor = at('2025-06-01T00:00:00Z');
  const hourly = parseSchedule({ interval: 'PT1H' });

  it('does nothing before the first run is due, and says when it is', () => {
    expect(planRuns({ schedule: hourly, anchor, now: anchor + 30 * MINUTE, running: false })).toEqual({
      runNow: false,
      nextRunAt: anchor + HOUR,
      missed: 0,
      due: 0,
      dueAt: null,
      skippedForOverlap: false,
    });
  });

  it('runs once when a run is due, on time or a little late, with nothing missed', () => {
    for (const now of [anchor + HOUR, anchor + HOUR + 900]) {
      expect(planRuns({ schedule: hourly, anchor, now, running: false })).toEqual({
        runNow: true,
        nextRunAt: anchor + 2 * HOUR,
        missed: 0,
        due: 1,
        dueAt: anchor + HOUR,
        skippedForOverlap: false,
      });
    }
  });

  it('after downtime, runs ONCE on start and reports the runs it folded in', () => {
    const daily = parseSchedule({ interval: 'P1D', timeZone: 'Europe/Berlin' });
    const lastRunAt = anchor + DAY; // ran on day 1; down from day 1 to day 4 + 5 h
    const now = anchor + 4 * DAY + 5 * HOUR;
    expect(planRuns({ schedule: daily, anchor, lastRunAt, now, running: false })).toEqual({
      runNow: true,
      nextRunAt: anchor + 5 * DAY,
      missed: 2, // days 2 and 3 get no run of their own; day 4's is this one, 5 h late
      due: 3,
      dueAt: anchor + 4 * DAY,
      skippedForOverlap: false,
    });
  });

  it('never bursts: ten hours of downtime, then ticks every second, start exactly one run', () => {
    const s = scheduler(hourly, anchor);
    const restart = anchor + 10 * HOUR + 17 * MINUTE;
    for (let now = restart; now < restart + 5 * MINUTE; now += 1000) s.tick(now);
    expect(s.started).toEqual([restart]);
    expect(s.plans[0]).toMatchObject({ runNow: true, missed: 9, due: 10, dueAt: anchor + 10 * HOUR });
    expect(s.plans.slice(1).every((p) => !p.runNow && p.missed === 0)).toBe(true);
    // and the next run is back on the anchor grid
    expect(s.plans.at(-1)?.nextRunAt).toBe(anchor + 11 * HOUR);
  });

  it('over three days of minute ticks, runs exactly at each due time, never twice', () => {
    const s = scheduler(hourly, anchor);
    for (let now = anchor; now <= anchor + 3 * DAY; now += MINUTE) s.tick(now);
    expect(s.started).toHaveLength(72);
    expect(s.started.every((t, i) => t === anchor + (i + 1) * HOUR)).toBe(true);
    expect(s.plans.every((p) => p.missed === 0)).toBe(true);
  });

  // Counted by arithmetic per day, not run by run (how fast is for a benchmark, not a test).
  it('counts a year of a minutely cron missed while down, exactly', () => {
    const minutely = parseSchedule({ cron: '* * * * *', timeZone: 'America/New_York' });
    const lastRunAt = at('2025-01-01T00:00:00Z');
    const plan = planRuns({
      schedule: minutely,
      anchor: lastRunAt - DAY,
      lastRunAt,
      now: lastRunAt + 365 * DAY,
      running: false,
    });
    // 2025 in New York: the repeated hour of Nov 2 runs once, so 60 minutes fewer than 365 × 1440
    expect(plan).toMatchObject({ runNow: true, due: 525_600 - 60, missed: 525_600 - 61 });
  });

  it('counts nothing before the schedule existed', () => {
    const daily = parseSchedule({ cron: '0 3 * * *' });
    const created = at('2025-06-10T12:00:00Z');
    const plan = planRuns({
      schedule: daily,
      anchor: created,
      lastRunAt: created - 30 * DAY,
      now: created + HOUR,
      running: false,
    });
    expect(plan).toMatchObject({ runNow: false, due: 0, nextRunAt: at('2025-06-11T03:00:00Z') });
  });

  it('a cron schedule that never ran has its first run after its creation', () => {
    const daily = parseSchedule({ cron: '0 3 * * *' });
    const created = at('2025-06-10T12:00:00Z');
    const plan = planRuns({ schedule: daily, anchor: created, now: at('2025-06-13T04:00:00Z'), running: false });
    expect(plan).toMatchObject({ runNow: true, due: 3, missed: 2, dueAt: at('2025-06-13T03:00:00Z') });
  });
});

describe('planRuns: no overlap', () => {
  const anchor = at('2025-06-01T00:00:00Z');
  const everyMinute = parseSchedule({ interval: 'PT1M' });

  it('does not start a run while the previous one is running, and reports the skip', () => {
    expect(
      planRuns({
        schedule: everyMinute,
        anchor,
        lastRunAt: anchor + MINUTE,
        now: anchor + 2 * MINUTE + 5,
        running: true,
      }),
    ).toEqual({
      runNow: false,
      nextRunAt: anchor + 3 * MINUTE,
      missed: 1,
      due: 1,
      dueAt: anchor + 2 * MINUTE,
      skippedForOverlap: true,
    });
  });

  it('a skipped run is not made up when the long run finishes: the next run is the next due time', () => {
    const s = scheduler(everyMinute, anchor);
    let runningUntil = 0;
    for (let now = anchor; now <= anchor + 10 * MINUTE; now += 1000) {
      const plan = s.tick(now, now < runningUntil);
      // the first run takes 2.5 minutes; the others 10 s
      if (plan.runNow) runningUntil = now + (s.started.length === 1 ? 150_000 : 10_000);
    }
    expect(s.started).toEqual([1, 4, 5, 6, 7, 8, 9, 10].map((m) => anchor + m * MINUTE));
    const skips = s.plans.filter((p) => p.skippedForOverlap);
    expect(skips.map((p) => p.dueAt)).toEqual([anchor + 2 * MINUTE, anchor + 3 * MINUTE]);
    // two runs never overlap: each started after the previous one finished
    expect(s.plans.filter((p) => p.runNow && p.skippedForOverlap)).toHaveLength(0);
  });
});
