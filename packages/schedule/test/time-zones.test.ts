import { nextRun, parseSchedule } from '../src';
import { at, local, runsAfter } from './helpers';

describe('time zones', () => {
  it('default to UTC', () => {
    expect(parseSchedule({ cron: '0 9 * * *' }).timeZone).toBe('UTC');
    expect(runsAfter(parseSchedule({ cron: '0 9 * * *' }), '2025-01-10T00:00:00Z', 1)).toEqual([
      '2025-01-10T09:00:00.000Z',
    ]);
  });

  it('Europe/Berlin: 09:00 local is 08:00 UTC in winter and 07:00 UTC in summer', () => {
    const s = parseSchedule({ cron: '0 9 * * *', timeZone: 'Europe/Berlin' });
    expect(runsAfter(s, '2025-01-10T00:00:00Z', 1)).toEqual(['2025-01-10T08:00:00.000Z']);
    expect(runsAfter(s, '2025-07-10T00:00:00Z', 1)).toEqual(['2025-07-10T07:00:00.000Z']);
  });

  it('America/New_York: 09:00 local is 14:00 UTC in winter and 13:00 UTC in summer', () => {
    const s = parseSchedule({ cron: '0 9 * * *', timeZone: 'America/New_York' });
    expect(runsAfter(s, '2025-01-10T00:00:00Z', 1)).toEqual(['2025-01-10T14:00:00.000Z']);
    expect(runsAfter(s, '2025-07-10T00:00:00Z', 1)).toEqual(['2025-07-10T13:00:00.000Z']);
  });

  it('Asia/Kolkata (+05:30): local hours fall on UTC half hours', () => {
    const s = parseSchedule({ cron: '0 9 * * *', timeZone: 'Asia/Kolkata' });
    expect(runsAfter(s, '2025-01-10T00:00:00Z', 2)).toEqual(['2025-01-10T03:30:00.000Z', '2025-01-11T03:30:00.000Z']);
    const halfPast = parseSchedule({ cron: '30 * * * *', timeZone: 'Asia/Kolkata' });
    expect(runsAfter(halfPast, '2025-01-10T00:10:00Z', 2)).toEqual([
      '2025-01-10T01:00:00.000Z',
      '2025-01-10T02:00:00.000Z',
    ]);
  });

  it('Asia/Kolkata: the local day, not the UTC day, decides day-of-week and day-of-month', () => {
    // 2025-01-12 is a Sunday; 00:15 Monday in Kolkata is still Sunday 18:45 in UTC
    const s = parseSchedule({ cron: '15 0 * * MON', timeZone: 'Asia/Kolkata' });
    expect(runsAfter(s, '2025-01-10T00:00:00Z', 1)).toEqual(['2025-01-12T18:45:00.000Z']);
    const first = parseSchedule({ cron: '0 1 1 * *', timeZone: 'Asia/Kolkata' });
    expect(runsAfter(first, '2025-01-10T00:00:00Z', 1)).toEqual(['2025-01-31T19:30:00.000Z']);
  });

  it('daily intervals keep the wall-clock time of the anchor in the zone', () => {
    const s = parseSchedule({ interval: 'P1D', timeZone: 'Asia/Kolkata' });
    const anchor = at('2025-01-10T03:30:00Z'); // 09:00 IST
    const runs = runsAfter(s, anchor, 3, anchor).map((r) => local(Date.parse(r), 'Asia/Kolkata'));
    expect(runs).toEqual(['2025-01-11 09:00 GMT+5:30', '2025-01-12 09:00 GMT+5:30', '2025-01-13 09:00 GMT+5:30']);
  });

  it('accepts zone names in any case, as Intl does', () => {
    const s = parseSchedule({ cron: '0 9 * * *', timeZone: 'europe/berlin' });
    expect(nextRun(s, at('2025-01-10T00:00:00Z'))).toBe(at('2025-01-10T08:00:00Z'));
  });
});
