import fc from 'fast-check';
import { ScheduleArgumentError, nextRun, parseSchedule, type CronSchedule } from '../src';
import { at, runsAfter } from './helpers';

const utc = (cron: string) => parseSchedule({ cron });
const times = (runs: string[]) => runs.map((r) => r.slice(0, 16));

describe('cron schedules (UTC)', () => {
  describe('field syntax', () => {
    it('a single value per field', () => {
      expect(times(runsAfter(utc('30 4 * * *'), '2025-05-01T05:00:00Z', 2))).toEqual([
        '2025-05-02T04:30',
        '2025-05-03T04:30',
      ]);
    });
    it('* matches every value', () => {
      expect(times(runsAfter(utc('* * * * *'), '2025-05-01T23:58:30Z', 3))).toEqual([
        '2025-05-01T23:59',
        '2025-05-02T00:00',
        '2025-05-02T00:01',
      ]);
    });
    it('*/15 steps from the field start', () => {
      expect(times(runsAfter(utc('*/15 * * * *'), '2025-05-01T10:00:00Z', 5))).toEqual([
        '2025-05-01T10:15',
        '2025-05-01T10:30',
        '2025-05-01T10:45',
        '2025-05-01T11:00',
        '2025-05-01T11:15',
      ]);
    });
    it('lists', () => {
      expect(times(runsAfter(utc('5,10,50 * * * *'), '2025-05-01T10:06:00Z', 3))).toEqual([
        '2025-05-01T10:10',
        '2025-05-01T10:50',
        '2025-05-01T11:05',
      ]);
    });
    it('ranges', () => {
      expect(times(runsAfter(utc('0 9-11 * * *'), '2025-05-01T09:30:00Z', 3))).toEqual([
        '2025-05-01T10:00',
        '2025-05-01T11:00',
        '2025-05-02T09:00',
      ]);
    });
    it('ranges with a step, and a start with a step (a/n = a to the end of the field, every n)', () => {
      expect(times(runsAfter(utc('0-30/10 * * * *'), '2025-05-01T10:00:00Z', 4))).toEqual([
        '2025-05-01T10:10',
        '2025-05-01T10:20',
        '2025-05-01T10:30',
        '2025-05-01T11:00',
      ]);
      expect(times(runsAfter(utc('5/20 * * * *'), '2025-05-01T10:00:00Z', 4))).toEqual([
        '2025-05-01T10:05',
        '2025-05-01T10:25',
        '2025-05-01T10:45',
        '2025-05-01T11:05',
      ]);
    });
    it('lists of ranges and steps together', () => {
      const s = utc('0,30 8-9,17 * * *') as CronSchedule;
      expect(s.fields.minutes).toEqual([0, 30]);
      expect(s.fields.hours).toEqual([8, 9, 17]);
    });
    it('day-of-week names and ranges (MON-FRI skips the weekend)', () => {
      // 2025-05-02 is a Friday
      expect(times(runsAfter(utc('0 9 * * MON-FRI'), '2025-05-02T10:00:00Z', 2))).toEqual([
        '2025-05-05T09:00',
        '2025-05-06T09:00',
      ]);
    });
    it('month names, in any case', () => {
      expect(times(runsAfter(utc('0 0 1 JAN,jul *'), '2025-02-01T00:00:00Z', 3))).toEqual([
        '2025-07-01T00:00',
        '2026-01-01T00:00',
        '2026-07-01T00:00',
      ]);
    });
    it('7 is Sunday as well as 0, and 5-7 is Friday to Sunday', () => {
      expect(times(runsAfter(utc('0 0 * * 7'), '2025-05-01T00:00:00Z', 1))).toEqual(['2025-05-04T00:00']);
      expect((utc('0 0 * * 5-7') as CronSchedule).fields.daysOfWeek).toEqual([0, 5, 6]);
    });
    it('rolls over the year', () => {
      expect(times(runsAfter(utc('0 0 1 1 *'), '2025-12-31T23:59:00Z', 1))).toEqual(['2026-01-01T00:00']);
    });
  });

  describe('aliases', () => {
    const expansions: [string, string][] = [
      ['@hourly', '0 * * * *'],
      ['@daily', '0 0 * * *'],
      ['@midnight', '0 0 * * *'],
      ['@weekly', '0 0 * * 0'],
      ['@monthly', '0 0 1 * *'],
      ['@yearly', '0 0 1 1 *'],
      ['@annually', '0 0 1 1 *'],
    ];
    it.each(expansions)('%s runs like "%s"', (alias, expression) => {
      const from = '2025-05-01T10:20:00Z';
      expect(runsAfter(utc(alias), from, 3)).toEqual(runsAfter(utc(expression), from, 3));
    });
    it('@weekly is Sunday midnight, @monthly the 1st', () => {
      expect(times(runsAfter(utc('@weekly'), '2025-05-01T00:00:00Z', 1))).toEqual(['2025-05-04T00:00']);
      expect(times(runsAfter(utc('@monthly'), '2025-05-01T00:00:00Z', 1))).toEqual(['2025-06-01T00:00']);
    });
  });

  describe('day-of-month and day-of-week (Vixie cron rule)', () => {
    it('when both are restricted, a day matching either runs (13th OR Friday)', () => {
      // June 2025: Fridays 6, 13, 20, 27; the 13th is itself a Friday
      expect(times(runsAfter(utc('0 0 13 * FRI'), '2025-06-01T00:00:00Z', 5))).toEqual([
        '2025-06-06T00:00',
        '2025-06-13T00:00',
        '2025-06-20T00:00',
        '2025-06-27T00:00',
        '2025-07-04T00:00',
      ]);
      expect(times(runsAfter(utc('0 0 1,15 * MON'), '2025-09-01T00:00:00Z', 4))).toEqual([
        '2025-09-08T00:00',
        '2025-09-15T00:00',
        '2025-09-22T00:00',
        '2025-09-29T00:00',
      ]);
    });
    it('when one starts with *, both must match (days 1, 11, 21, 31 that are Mondays)', () => {
      // July 2025: the 21st is a Monday (the 1st, 11th and 31st are not); then Aug 11, Sep 1
      expect(times(runsAfter(utc('0 0 */10 * MON'), '2025-07-01T00:00:00Z', 3))).toEqual([
        '2025-07-21T00:00',
        '2025-08-11T00:00',
        '2025-09-01T00:00',
      ]);
    });
    it('restricted is about the text, not the values: 1-31 with MON runs every day, * with MON on Mondays', () => {
      // the same days-of-month either way; only the text decides between "either" and "both"
      expect(times(runsAfter(utc('0 0 1-31 * MON'), '2025-06-01T00:00:00Z', 2))).toEqual([
        '2025-06-02T00:00',
        '2025-06-03T00:00',
      ]);
      expect(times(runsAfter(utc('0 0 * * MON'), '2025-06-01T00:00:00Z', 2))).toEqual([
        '2025-06-02T00:00',
        '2025-06-09T00:00',
      ]);
      expect(times(runsAfter(utc('0 0 */1 * 0-6'), '2025-06-01T00:00:00Z', 1))).toEqual(['2025-06-02T00:00']);
    });
    it('a restricted day-of-month with day-of-week * runs on those days only', () => {
      expect(times(runsAfter(utc('0 0 1,15 * *'), '2025-09-01T00:00:00Z', 2))).toEqual([
        '2025-09-15T00:00',
        '2025-10-01T00:00',
      ]);
    });
  });

  describe('month ends and leap days', () => {
    it('the 31st skips months that have no 31st', () => {
      expect(times(runsAfter(utc('0 0 31 * *'), '2025-01-31T00:00:00Z', 4))).toEqual([
        '2025-03-31T00:00',
        '2025-05-31T00:00',
        '2025-07-31T00:00',
        '2025-08-31T00:00',
      ]);
    });
    it('the 30th skips February', () => {
      expect(times(runsAfter(utc('0 0 30 * *'), '2025-01-30T00:00:00Z', 2))).toEqual([
        '2025-03-30T00:00',
        '2025-04-30T00:00',
      ]);
    });
    it('Feb 29 runs in leap years only', () => {
      expect(times(runsAfter(utc('0 12 29 2 *'), '2025-01-01T00:00:00Z', 2))).toEqual([
        '2028-02-29T12:00',
        '2032-02-29T12:00',
      ]);
    });
    it('2100 is not a leap year', () => {
      expect(times(runsAfter(utc('0 0 29 2 *'), '2096-03-01T00:00:00Z', 1))).toEqual(['2104-02-29T00:00']);
    });
    it('runs in any year up to 9999, and says when there is no run before the year 10000', () => {
      expect(times(runsAfter(utc('0 0 29 2 *'), '3000-01-01T00:00:00Z', 1))).toEqual(['3004-02-29T00:00']);
      expect(times(runsAfter(utc('59 23 31 12 *'), '9999-01-01T00:00:00Z', 1))).toEqual(['9999-12-31T23:59']);
      expect(() => nextRun(utc('0 0 29 2 *'), at('9996-03-01T00:00:00Z'))).toThrow(ScheduleArgumentError);
    });
    it('the last days of February in a leap year', () => {
      expect(times(runsAfter(utc('0 0 28-31 2 *'), '2028-02-01T00:00:00Z', 3))).toEqual([
        '2028-02-28T00:00',
        '2028-02-29T00:00',
        '2029-02-28T00:00',
      ]);
    });
  });

  it('agrees with a minute-by-minute search for random expressions (property)', () => {
    const item = (min: number, max: number) =>
      fc.oneof(
        fc.constant('*'),
        fc.integer({ min: 1, max: max - min + 1 }).map((n) => `*/${n}`),
        fc.integer({ min, max }).map(String),
        fc
          .tuple(fc.integer({ min, max }), fc.integer({ min, max }), fc.integer({ min: 1, max: 5 }))
          .map(([a, b, n]) => `${Math.min(a, b)}-${Math.max(a, b)}/${n}`),
        fc.uniqueArray(fc.integer({ min, max }), { minLength: 2, maxLength: 4 }).map((v) => v.join(',')),
      );
    const expression = fc
      .tuple(item(0, 59), item(0, 23), item(1, 28), item(1, 12), item(0, 6))
      .map((fields) => fields.join(' '));
    const after = fc.integer({ min: at('2024-01-01T00:00:00Z'), max: at('2027-01-01T00:00:00Z') });
    fc.assert(
      fc.property(expression, after, (cron, t) => {
        const s = utc(cron) as CronSchedule;
        expect(nextRun(s, t)).toBe(bruteForceNext(s, t));
      }),
      { numRuns: 300 },
    );
  });
});

/** The first minute after `t` that matches, found day by day and minute by minute in UTC (an independent oracle). */
function bruteForceNext(s: CronSchedule, t: number): number {
  const f = s.fields;
  const day0 = Math.floor(t / 86_400_000) * 86_400_000;
  for (let day = day0; day < day0 + 30 * 366 * 86_400_000; day += 86_400_000) {
    const d = new Date(day);
    if (!f.months.includes(d.getUTCMonth() + 1)) continue;
    const dom = f.daysOfMonth.includes(d.getUTCDate());
    const dow = f.daysOfWeek.includes(d.getUTCDay());
    const dayOk = f.daysOfMonthRestricted && f.daysOfWeekRestricted ? dom || dow : dom && dow;
    if (!dayOk) continue;
    for (let m = 0; m < 1440; m++) {
      const when = day + m * 60_000;
      if (when > t && f.hours.includes(Math.floor(m / 60)) && f.minutes.includes(m % 60)) return when;
    }
  }
  throw new Error('no match within 30 years');
}
