import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ScheduleArgumentError,
  ScheduleError,
  ScheduleErrorCode,
  ScheduleValidationError,
  parseSchedule,
  type ScheduleSpec,
} from '../src';

function messageOf(spec: unknown): string {
  try {
    parseSchedule(spec as ScheduleSpec);
  } catch (e) {
    if (e instanceof ScheduleValidationError) return e.message;
    throw e;
  }
  throw new Error(`accepted ${JSON.stringify(spec)}`);
}

describe('parseSchedule validation', () => {
  it.each<[ScheduleSpec, string]>([
    [{ cron: '0 25 * * *' }, '/cron: field 2 (hour) value 25 out of range 0-23'],
    [{ cron: '60 * * * *' }, '/cron: field 1 (minute) value 60 out of range 0-59'],
    [{ cron: '0 0 0 * *' }, '/cron: field 3 (day-of-month) value 0 out of range 1-31'],
    [{ cron: '0 0 * 13 *' }, '/cron: field 4 (month) value 13 out of range 1-12'],
    [{ cron: '0 0 * * 8' }, '/cron: field 5 (day-of-week) value 8 out of range 0-7'],
    [{ cron: '0 0 * * FOO' }, '/cron: field 5 (day-of-week) unknown name "FOO"; use SUN MON TUE WED THU FRI SAT'],
    [
      { cron: '0 0 * SMARCH *' },
      '/cron: field 4 (month) unknown name "SMARCH"; use JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC',
    ],
    [{ cron: 'MON * * * *' }, '/cron: field 1 (minute) "MON" is not a number'],
    [{ cron: '*/0 * * * *' }, '/cron: field 1 (minute) step 0 out of range 1-60'],
    [{ cron: '*/x * * * *' }, '/cron: field 1 (minute) step "x" is not a whole number'],
    [{ cron: '0 10-5 * * *' }, '/cron: field 2 (hour) range "10-5" is reversed (10-5)'],
    [{ cron: '0 FRI-MON * * *' }, '/cron: field 2 (hour) "FRI" is not a number'],
    [{ cron: '0 0 * * FRI-MON' }, '/cron: field 5 (day-of-week) range "FRI-MON" is reversed (5-1)'],
    [{ cron: '1,,2 * * * *' }, '/cron: field 1 (minute) "1,,2" has an empty list item'],
    [{ cron: '1/2/3 * * * *' }, '/cron: field 1 (minute) "1/2/3" has more than one "/"'],
    [{ cron: '1-2-3 * * * *' }, '/cron: field 1 (minute) "1-2-3" is not a value, range or step'],
    [{ cron: '0 0 * *' }, '/cron: expected 5 fields (minute hour day-of-month month day-of-week) or an @alias, got 4'],
    [
      { cron: '0 0 * * * 2025' },
      '/cron: expected 5 fields (minute hour day-of-month month day-of-week) or an @alias, got 6',
    ],
    [
      { cron: '@reboot' },
      '/cron: unknown alias "@reboot"; use one of @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually',
    ],
    [{ cron: '0 0 30 2 *' }, '/cron: never runs: day-of-month 30 does not occur in month 2'],
    [{ cron: '0 0 31 4,6 *' }, '/cron: never runs: day-of-month 31 does not occur in month 4,6'],
    [{ cron: '@daily', timeZone: 'Mars/Base' }, '/timeZone: unknown time zone "Mars/Base"'],
    [
      { interval: 'P1M' },
      '/interval: "P1M" uses years or months, which have no fixed length; use days or a cron expression',
    ],
    [
      { interval: 'P1Y' },
      '/interval: "P1Y" uses years or months, which have no fixed length; use days or a cron expression',
    ],
    [{ interval: 'PT30S' }, '/interval: "PT30S" is shorter than the minimum of 1 minute'],
    [{ interval: 'PT0M' }, '/interval: "PT0M" is shorter than the minimum of 1 minute'],
    [
      { interval: '1h' },
      '/interval: invalid ISO-8601 duration "1h"; expected whole W, D, H, M, S units, e.g. "P1D", "P7D", "PT6H", "PT15M", "P1DT12H"',
    ],
    [
      { interval: 'PT' },
      '/interval: invalid ISO-8601 duration "PT"; expected whole W, D, H, M, S units, e.g. "P1D", "P7D", "PT6H", "PT15M", "P1DT12H"',
    ],
    [
      { interval: 'PT1.5H' },
      '/interval: invalid ISO-8601 duration "PT1.5H"; expected whole W, D, H, M, S units, e.g. "P1D", "P7D", "PT6H", "PT15M", "P1DT12H"',
    ],
    [{ interval: 'P9999D' }, '/interval: "P9999D" is longer than 3660 days'],
    [{ interval: 'PT1H', cron: '@hourly' }, '/: give exactly one of interval (an ISO-8601 duration) or cron, not both'],
    [{ timeZone: 'UTC' }, '/: give exactly one of interval (an ISO-8601 duration) or cron, not neither'],
    [{ interval: 5 as unknown as string }, '/interval: expected a non-empty string, got number'],
    [{ cron: '' }, '/cron: expected a non-empty string, got an empty string'],
    [{ cron: '@daily', timeZone: null as unknown as string }, '/timeZone: expected a non-empty string, got null'],
  ])('%j → %s', (spec, message) => {
    expect(messageOf(spec)).toBe(message);
  });

  // croner, which finds the run times, reads a wider syntax: seconds and years, L, W, #, ?, the +
  // of its AND mode, and (behind an option) a step without a start. This API does not: each is
  // refused before croner sees it, in the words of the parser above.
  it.each<[string, string]>([
    ['0 0 0 * * *', 'expected 5 fields (minute hour day-of-month month day-of-week) or an @alias, got 6'],
    ['0 0 0 1 1 * 2030', 'expected 5 fields (minute hour day-of-month month day-of-week) or an @alias, got 7'],
    ['0 0 L * *', 'field 3 (day-of-month) "L" is not a number'],
    ['0 0 15W * *', 'field 3 (day-of-month) "15W" is not a number'],
    ['0 0 LW * *', 'field 3 (day-of-month) "LW" is not a number'],
    ['0 0 ? * MON', 'field 3 (day-of-month) "?" is not a number'],
    ['0 0 * * ?', 'field 5 (day-of-week) "?" is not a number or a name'],
    ['0 0 * * 5#2', 'field 5 (day-of-week) "5#2" is not a number or a name'],
    ['0 0 * * FRI#2', 'field 5 (day-of-week) "FRI#2" is not a number or a name'],
    ['0 0 * * 5L', 'field 5 (day-of-week) "5L" is not a number or a name'],
    ['0 0 * * FRIL', 'field 5 (day-of-week) unknown name "FRIL"; use SUN MON TUE WED THU FRI SAT'],
    ['0 0 * * +MON', 'field 5 (day-of-week) "+MON" is not a number or a name'],
    ['/10 * * * *', 'field 1 (minute) "" is not a number'],
  ])('refuses %j, which croner would accept: %s', (cron, message) => {
    expect(messageOf({ cron })).toBe(`/cron: ${message}`);
  });

  it('reports every problem at once, each under its field', () => {
    let error: unknown;
    try {
      parseSchedule({ interval: 'PT30S', timeZone: 'Mars/Base' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ScheduleValidationError);
    expect(error).toBeInstanceOf(ScheduleError);
    expect(error).toMatchObject({
      code: ScheduleErrorCode.INVALID,
      retriable: false,
      issues: [
        { path: '/timeZone', message: 'unknown time zone "Mars/Base"' },
        { path: '/interval', message: '"PT30S" is shorter than the minimum of 1 minute' },
      ],
    });
    expect((error as Error).message).toBe(
      '/timeZone: unknown time zone "Mars/Base"; /interval: "PT30S" is shorter than the minimum of 1 minute',
    );
  });

  it('rejects what is not an object', () => {
    for (const spec of [null, 'PT1H', ['PT1H']])
      expect(messageOf(spec)).toBe('/: expected an object with interval or cron, and timeZone');
  });

  it('lowers the one-minute floor only through minIntervalMs, which must be a whole positive number', () => {
    expect(parseSchedule({ interval: 'PT1S' }, { minIntervalMs: 1000 })).toMatchObject({
      kind: 'interval',
      fixedMs: 1000,
    });
    expect(() => parseSchedule({ interval: 'PT1S' }, { minIntervalMs: 2000 })).toThrow(
      '/interval: "PT1S" is shorter than the minimum of 2 s',
    );
    for (const bad of [0, -1, 0.5, NaN]) {
      expect(() => parseSchedule({ interval: 'PT1M' }, { minIntervalMs: bad })).toThrow(ScheduleArgumentError);
    }
  });

  it('returns plain data with the spec and the zone (default UTC)', () => {
    expect(parseSchedule({ interval: 'P1DT6H', timeZone: 'Asia/Kolkata' })).toEqual({
      kind: 'interval',
      interval: 'P1DT6H',
      timeZone: 'Asia/Kolkata',
      days: 1,
      fixedMs: 6 * 3_600_000,
    });
    expect(parseSchedule({ cron: '  @hourly ' })).toMatchObject({ kind: 'cron', cron: '  @hourly ', timeZone: 'UTC' });
  });

  it('documents every error code in the README', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    for (const code of Object.values(ScheduleErrorCode)) expect(readme).toContain(`\`${code}\``);
  });
});
