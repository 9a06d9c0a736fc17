import { nextRun, parseSchedule, ScheduleValidationError, type CronSchedule, type ScheduleSpec } from '../src';
import { shortestCronGapMs } from '../src/cron-gap';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const cronOf = (cron: string, timeZone = 'UTC') => parseSchedule({ cron, timeZone }) as CronSchedule;

function issuesOf(spec: ScheduleSpec, minIntervalMs: number) {
  try {
    parseSchedule(spec, { minIntervalMs });
  } catch (e) {
    if (e instanceof ScheduleValidationError) return e.issues;
    throw e;
  }
  return [];
}

describe('the shortest gap between two runs of a cron expression', () => {
  it.each([
    ['* * * * *', MINUTE],
    ['*/15 * * * *', 15 * MINUTE],
    ['0,50 * * * *', 10 * MINUTE], // :50 to the next hour's :00
    ['@hourly', HOUR],
    ['0 3 * * *', DAY],
    ['0 2,22 * * *', 4 * HOUR], // 22:00 to 02:00 the next day
    ['30 0,23 * * 0,1', HOUR], // Sunday 23:30 to Monday 00:30
    ['0 9 * * MON-FRI', DAY],
    ['@weekly', 7 * DAY],
    ['@monthly', 28 * DAY], // February
    ['0 0 31 * *', 31 * DAY], // July 31 to August 31
    ['0 0 13 * FRI', DAY], // either day field: a Friday the 12th, then the 13th
    ['0 0 */10 * MON', 21 * DAY], // both: Monday the 21st of a 31-day month, then Monday the 11th
    ['@yearly', 365 * DAY],
    ['0 0 29 2 *', 4 * 365 * DAY + DAY], // leap days (and 8 years across 2100)
  ])('%s: %d ms', (cron, gap) => {
    expect(shortestCronGapMs(cronOf(cron).fields)).toBe(gap);
  });

  it.each(['17 */5 * * *', '0 0,12 * * 1-5', '0 6 1,15 * *', '0 0 * * 0,3', '45 23 28-31 * *'])(
    '%s: no two consecutive runs over five years in UTC are closer',
    (cron) => {
      const schedule = cronOf(cron);
      let at = nextRun(schedule, Date.UTC(2026, 0, 1));
      let shortest = Number.POSITIVE_INFINITY;
      for (let n = 0; n < 20_000 && at < Date.UTC(2031, 0, 1); n++) {
        const next = nextRun(schedule, at);
        shortest = Math.min(shortest, next - at);
        at = next;
      }
      expect(shortest).toBe(shortestCronGapMs(schedule.fields));
    },
  );
});

describe('cron schedules under a minimum interval', () => {
  it('refuses runs closer than the minimum, naming /cron', () => {
    expect(issuesOf({ cron: '* * * * *' }, 5 * MINUTE)).toEqual([
      { path: '/cron', message: '"* * * * *" runs 1 minute apart, less than the minimum of 5 minutes' },
    ]);
    expect(issuesOf({ cron: '0 2,22 * * *' }, 6 * HOUR)).toEqual([
      { path: '/cron', message: '"0 2,22 * * *" runs 4 hours apart, less than the minimum of 6 hours' },
    ]);
    expect(issuesOf({ cron: '0 0 * * 1,2' }, 2 * DAY)[0]?.message).toMatch(/runs 1 day apart/);
  });

  it('accepts runs exactly the minimum apart', () => {
    expect(issuesOf({ cron: '*/5 * * * *' }, 5 * MINUTE)).toEqual([]);
    expect(issuesOf({ cron: '0 2,22 * * *' }, 4 * HOUR)).toEqual([]);
    expect(issuesOf({ cron: '@weekly' }, DAY)).toEqual([]);
  });

  it('measures on the wall clock, as interval days are: a DST change does not decide', () => {
    // 01:00 and 03:00 in Berlin are 1 h apart the day clocks go forward, 2 h on every other day.
    expect(issuesOf({ cron: '0 1,3 * * *', timeZone: 'Europe/Berlin' }, 2 * HOUR)).toEqual([]);
    expect(issuesOf({ cron: '0 1,3 * * *', timeZone: 'Europe/Berlin' }, 2 * HOUR + 1)).toHaveLength(1);
  });
});
