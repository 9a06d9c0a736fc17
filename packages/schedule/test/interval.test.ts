import { ScheduleArgumentError, countRuns, nextRun, parseSchedule } from '../src';
import { at, iso, runsAfter } from './helpers';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('interval schedules', () => {
  const anchor = at('2025-06-10T10:07:13.250Z');

  it('runs one interval after the anchor, then every interval', () => {
    const s = parseSchedule({ interval: 'PT15M' });
    expect(runsAfter(s, anchor, 3, anchor)).toEqual([
      '2025-06-10T10:22:13.250Z',
      '2025-06-10T10:37:13.250Z',
      '2025-06-10T10:52:13.250Z',
    ]);
  });

  it('gives the first run strictly after the given time, even when that time is a run', () => {
    const s = parseSchedule({ interval: 'PT1H' });
    expect(nextRun(s, anchor + HOUR, anchor)).toBe(anchor + 2 * HOUR);
    expect(nextRun(s, anchor + HOUR - 1, anchor)).toBe(anchor + HOUR);
  });

  it('gives the first run for any time before the anchor', () => {
    const s = parseSchedule({ interval: 'PT1H' });
    expect(nextRun(s, anchor - 5 * HOUR, anchor)).toBe(anchor + HOUR);
  });

  it('stays on the anchor grid months later (no drift)', () => {
    const s = parseSchedule({ interval: 'PT15M' });
    const later = anchor + 100 * 24 * HOUR + 3;
    const run = nextRun(s, later, anchor);
    expect((run - anchor) % (15 * MINUTE)).toBe(0);
    expect(run - later).toBeLessThanOrEqual(15 * MINUTE);
    expect(run).toBeGreaterThan(later);
  });

  it('does not drift when every run starts late and the next one is asked from the actual start', () => {
    const s = parseSchedule({ interval: 'PT1M' });
    let due = nextRun(s, anchor, anchor);
    for (let i = 1; i <= 50; i++) {
      const startedLate = due + 1234; // the scheduler tick, the scan's creation: always a bit late
      due = nextRun(s, startedLate, anchor);
      expect(due).toBe(anchor + (i + 1) * MINUTE);
    }
  });

  it('combines calendar days and fixed hours (P1DT12H every 36 h in UTC)', () => {
    const s = parseSchedule({ interval: 'P1DT12H' });
    const a = at('2025-01-01T00:00:00Z');
    expect(runsAfter(s, a, 3, a)).toEqual([
      '2025-01-02T12:00:00.000Z',
      '2025-01-04T00:00:00.000Z',
      '2025-01-05T12:00:00.000Z',
    ]);
  });

  it('reads weeks as 7 calendar days', () => {
    const s = parseSchedule({ interval: 'P2W' });
    const a = at('2025-01-01T06:00:00Z');
    expect(runsAfter(s, a, 2, a)).toEqual(['2025-01-15T06:00:00.000Z', '2025-01-29T06:00:00.000Z']);
  });

  it('counts the runs in a range exactly: (from, to]', () => {
    const s = parseSchedule({ interval: 'PT1H' });
    expect(countRuns(s, anchor, anchor + 10 * HOUR, anchor)).toBe(10);
    expect(countRuns(s, anchor + 1, anchor + 10 * HOUR - 1, anchor)).toBe(9);
    expect(countRuns(s, anchor + 10 * HOUR, anchor, anchor)).toBe(0);
    const daily = parseSchedule({ interval: 'P1D', timeZone: 'Europe/Berlin' });
    expect(countRuns(daily, anchor, at('2026-06-10T10:07:13.250Z'), anchor)).toBe(365);
  });

  it('accepts a shorter interval only with an explicit minIntervalMs (for tests)', () => {
    const s = parseSchedule({ interval: 'PT2S' }, { minIntervalMs: 1000 });
    expect(nextRun(s, anchor, anchor)).toBe(anchor + 2000);
  });

  it('needs the anchor: an interval has no runs without a starting point', () => {
    const s = parseSchedule({ interval: 'PT1H' });
    expect(() => nextRun(s, anchor)).toThrow(ScheduleArgumentError);
    expect(() => nextRun(s, anchor)).toThrow(/needs its anchor/);
  });

  it('refuses times that are not epoch ms', () => {
    const s = parseSchedule({ cron: '@hourly' });
    for (const bad of [NaN, Infinity, 1e17]) expect(() => nextRun(s, bad)).toThrow(ScheduleArgumentError);
  });

  it('keeps the UTC time of day for P1D in UTC', () => {
    const s = parseSchedule({ interval: 'P1D' });
    expect(runsAfter(s, anchor, 2, anchor).map((t) => t.slice(11))).toEqual(['10:07:13.250Z', '10:07:13.250Z']);
    expect(iso(nextRun(s, anchor, anchor))).toBe('2025-06-11T10:07:13.250Z');
  });
});
