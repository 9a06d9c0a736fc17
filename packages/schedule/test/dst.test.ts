import fc from 'fast-check';
import { countRuns, nextRun, parseSchedule } from '../src';
import { at, local, runsAfter } from './helpers';

// Europe/Berlin 2025: clocks spring forward on Mar 30 at 02:00 CET (01:00Z) to 03:00 CEST,
// and fall back on Oct 26 at 03:00 CEST (01:00Z) to 02:00 CET: 02:00-02:59 happens twice.
// America/New_York 2025: Mar 9 at 02:00 EST (07:00Z) to 03:00 EDT; Nov 2 at 02:00 EDT (06:00Z)
// back to 01:00 EST: 01:00-01:59 happens twice.
const BERLIN = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';
const berlin = (cron: string) => parseSchedule({ cron, timeZone: BERLIN });
const newYork = (cron: string) => parseSchedule({ cron, timeZone: NEW_YORK });
const inZone = (runs: string[], tz: string) => runs.map((r) => local(Date.parse(r), tz));

describe('DST: a wall time that does not exist runs at the first instant after the gap', () => {
  it('cron, Europe/Berlin: 02:30 on the spring-forward day runs at 03:00 CEST, then 02:30 again', () => {
    expect(runsAfter(berlin('30 2 * * *'), '2025-03-29T00:00:00Z', 3)).toEqual([
      '2025-03-29T01:30:00.000Z',
      '2025-03-30T01:00:00.000Z',
      '2025-03-31T00:30:00.000Z',
    ]);
    expect(inZone(runsAfter(berlin('30 2 * * *'), '2025-03-29T12:00:00Z', 2), BERLIN)).toEqual([
      '2025-03-30 03:00 GMT+2',
      '2025-03-31 02:30 GMT+2',
    ]);
  });

  it('cron, Europe/Berlin: every wall time in the gap collapses into one run (hourly and half-hourly)', () => {
    expect(inZone(runsAfter(berlin('0 * * * *'), '2025-03-29T23:30:00Z', 4), BERLIN)).toEqual([
      '2025-03-30 01:00 GMT+1',
      '2025-03-30 03:00 GMT+2', // 02:00 and 03:00 are one run
      '2025-03-30 04:00 GMT+2',
      '2025-03-30 05:00 GMT+2',
    ]);
    expect(inZone(runsAfter(berlin('*/30 * * * *'), '2025-03-30T00:10:00Z', 3), BERLIN)).toEqual([
      '2025-03-30 01:30 GMT+1',
      '2025-03-30 03:00 GMT+2', // 02:00, 02:30 and 03:00 are one run
      '2025-03-30 03:30 GMT+2',
    ]);
  });

  // croner's own time-zone mode skips these gap times for any hour or minute that is not a single
  // value ("interval jobs"); the documented rule holds for every expression.
  it('cron, Europe/Berlin: a gap time of a wildcard or list hour also runs at the end of the gap', () => {
    expect(inZone(runsAfter(berlin('15 * * * *'), '2025-03-30T00:00:00Z', 3), BERLIN)).toEqual([
      '2025-03-30 01:15 GMT+1',
      '2025-03-30 03:00 GMT+2', // 02:15
      '2025-03-30 03:15 GMT+2',
    ]);
    expect(inZone(runsAfter(berlin('30 1,2,3 * * *'), '2025-03-30T00:00:00Z', 3), BERLIN)).toEqual([
      '2025-03-30 01:30 GMT+1',
      '2025-03-30 03:00 GMT+2', // 02:30
      '2025-03-30 03:30 GMT+2',
    ]);
  });

  it('cron, America/New_York: 02:30 on the spring-forward day runs at 03:00 EDT', () => {
    expect(inZone(runsAfter(newYork('30 2 * * *'), '2025-03-08T12:00:00Z', 3), NEW_YORK)).toEqual([
      '2025-03-09 03:00 GMT-4',
      '2025-03-10 02:30 GMT-4',
      '2025-03-11 02:30 GMT-4',
    ]);
    expect(runsAfter(newYork('30 2 * * *'), '2025-03-08T12:00:00Z', 1)).toEqual(['2025-03-09T07:00:00.000Z']);
  });

  it('daily interval, Europe/Berlin: anchored at 02:30, the spring-forward run is at 03:00 and the next back at 02:30', () => {
    const s = parseSchedule({ interval: 'P1D', timeZone: BERLIN });
    const anchor = at('2025-03-27T01:30:00Z'); // 02:30 CET
    expect(inZone(runsAfter(s, anchor, 4, anchor), BERLIN)).toEqual([
      '2025-03-28 02:30 GMT+1',
      '2025-03-29 02:30 GMT+1',
      '2025-03-30 03:00 GMT+2',
      '2025-03-31 02:30 GMT+2',
    ]);
  });

  it('daily interval, America/New_York: anchored at 02:30, the spring-forward run is at 03:00 EDT', () => {
    const s = parseSchedule({ interval: 'P1D', timeZone: NEW_YORK });
    const anchor = at('2025-03-07T07:30:00Z'); // 02:30 EST
    expect(runsAfter(s, anchor, 3, anchor)).toEqual([
      '2025-03-08T07:30:00.000Z',
      '2025-03-09T07:00:00.000Z',
      '2025-03-10T06:30:00.000Z',
    ]);
  });
});

describe('DST: a wall time that happens twice runs once, at its first occurrence', () => {
  it('cron, Europe/Berlin: 02:30 on the fall-back day runs at 02:30 CEST only', () => {
    expect(inZone(runsAfter(berlin('30 2 * * *'), '2025-10-25T12:00:00Z', 2), BERLIN)).toEqual([
      '2025-10-26 02:30 GMT+2',
      '2025-10-27 02:30 GMT+1',
    ]);
  });

  it('cron, Europe/Berlin: hourly runs skip the repeated hour', () => {
    expect(inZone(runsAfter(berlin('0 * * * *'), '2025-10-25T23:30:00Z', 3), BERLIN)).toEqual([
      '2025-10-26 02:00 GMT+2',
      '2025-10-26 03:00 GMT+1', // two hours later: 02:00 CET would repeat 02:00
      '2025-10-26 04:00 GMT+1',
    ]);
  });

  // croner's own time-zone mode runs both occurrences for these ("interval jobs"); here they run once.
  it('cron, Europe/Berlin: a repeated time of a list or stepped field runs at its first occurrence only', () => {
    expect(inZone(runsAfter(berlin('30 1,2,3 * * *'), '2025-10-25T22:00:00Z', 3), BERLIN)).toEqual([
      '2025-10-26 01:30 GMT+2',
      '2025-10-26 02:30 GMT+2', // not again at 02:30 CET
      '2025-10-26 03:30 GMT+1',
    ]);
    expect(countRuns(berlin('*/15 * * * *'), at('2025-10-25T22:00:00Z'), at('2025-10-26T23:00:00Z'))).toBe(24 * 4);
  });

  it('cron, Europe/Berlin: asked from inside the repeated hour, the next run is after it', () => {
    // 01:10Z is 02:10 CET, the second 02:10 of the night; 02:30 already ran at its first occurrence
    expect(inZone(runsAfter(berlin('*/30 * * * *'), '2025-10-26T01:10:00Z', 1), BERLIN)).toEqual([
      '2025-10-26 03:00 GMT+1',
    ]);
  });

  it('cron, America/New_York: 01:30 on the fall-back day runs at 01:30 EDT only', () => {
    expect(runsAfter(newYork('30 1 * * *'), '2025-11-01T12:00:00Z', 2)).toEqual([
      '2025-11-02T05:30:00.000Z', // 01:30 EDT; 01:30 EST (06:30Z) does not run
      '2025-11-03T06:30:00.000Z',
    ]);
  });

  it('daily interval, Europe/Berlin: anchored at 02:30, the fall-back run is the first 02:30', () => {
    const s = parseSchedule({ interval: 'P1D', timeZone: BERLIN });
    const anchor = at('2025-10-24T00:30:00Z'); // 02:30 CEST
    expect(runsAfter(s, anchor, 3, anchor)).toEqual([
      '2025-10-25T00:30:00.000Z',
      '2025-10-26T00:30:00.000Z', // 02:30 CEST, not 02:30 CET (01:30Z)
      '2025-10-27T01:30:00.000Z',
    ]);
  });

  it('daily interval, America/New_York: anchored at 01:30, the fall-back run is 01:30 EDT', () => {
    const s = parseSchedule({ interval: 'P1D', timeZone: NEW_YORK });
    const anchor = at('2025-10-31T05:30:00Z'); // 01:30 EDT
    expect(inZone(runsAfter(s, anchor, 3, anchor), NEW_YORK)).toEqual([
      '2025-11-01 01:30 GMT-4',
      '2025-11-02 01:30 GMT-4',
      '2025-11-03 01:30 GMT-5',
    ]);
  });
});

describe('DST: calendar days versus fixed durations', () => {
  it('P1D keeps 09:00 local: 23 h across spring forward, 25 h across fall back', () => {
    const s = parseSchedule({ interval: 'P1D', timeZone: BERLIN });
    const spring = at('2025-03-29T08:00:00Z'); // 09:00 CET
    expect(nextRun(s, spring, spring) - spring).toBe(23 * 3_600_000);
    const fall = at('2025-10-25T07:00:00Z'); // 09:00 CEST
    expect(nextRun(s, fall, fall) - fall).toBe(25 * 3_600_000);
  });

  it('PT24H and PT1H are elapsed time: the wall clock moves, the spacing does not', () => {
    const day = parseSchedule({ interval: 'PT24H', timeZone: BERLIN });
    const anchor = at('2025-03-29T08:00:00Z'); // 09:00 CET
    expect(inZone(runsAfter(day, anchor, 2, anchor), BERLIN)).toEqual([
      '2025-03-30 10:00 GMT+2',
      '2025-03-31 10:00 GMT+2',
    ]);
    const hour = parseSchedule({ interval: 'PT1H', timeZone: BERLIN });
    const night = at('2025-03-29T23:00:00Z'); // 00:00 CET
    expect(inZone(runsAfter(hour, night, 3, night), BERLIN)).toEqual([
      '2025-03-30 01:00 GMT+1',
      '2025-03-30 03:00 GMT+2',
      '2025-03-30 04:00 GMT+2',
    ]);
  });
});

describe('DST: counting runs', () => {
  it('an hourly cron has 23 runs on the spring-forward day and 24 on the fall-back day (of 25 h)', () => {
    const hourly = berlin('0 * * * *');
    expect(countRuns(hourly, at('2025-03-29T23:00:00Z') - 1, at('2025-03-30T22:00:00Z') - 1)).toBe(23);
    expect(countRuns(hourly, at('2025-10-25T22:00:00Z') - 1, at('2025-10-26T23:00:00Z') - 1)).toBe(24);
  });

  it('a minutely cron over a year in Berlin loses exactly the repeated hour', () => {
    const minutely = berlin('* * * * *');
    expect(countRuns(minutely, at('2025-01-01T00:00:00Z'), at('2026-01-01T00:00:00Z'))).toBe(525_600 - 60);
  });

  it('agrees with stepping run by run, in zones with DST, half-hour DST and half-hour offsets (property)', () => {
    const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'UTC'];
    const crons = ['*/20 * * * *', '0 * * * *', '30 1,2,3 * * *', '0 0 * * *', '15 2 * * SUN', '*/7 0-4 1-10 * *'];
    const window = fc.record({
      zone: fc.constantFrom(...zones),
      cron: fc.constantFrom(...crons),
      from: fc.integer({ min: at('2025-03-01T00:00:00Z'), max: at('2025-11-30T00:00:00Z') }),
      span: fc.integer({ min: 0, max: 10 * 86_400_000 }),
    });
    fc.assert(
      fc.property(window, ({ zone, cron, from, span }) => {
        const s = parseSchedule({ cron, timeZone: zone });
        let stepped = 0;
        for (let t = nextRun(s, from); t <= from + span; t = nextRun(s, t)) stepped++;
        expect(countRuns(s, from, from + span)).toBe(stepped);
      }),
      { numRuns: 60 },
    );
  });

  it('never returns a run at or before the time asked, and never goes backwards (property)', () => {
    const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe'];
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.constantFrom('*/30 * * * *', '0 2 * * *', '30 1 * * *', '0 * * * *'),
        fc.integer({ min: at('2025-01-01T00:00:00Z'), max: at('2026-01-01T00:00:00Z') }),
        (timeZone, cron, t) => {
          const s = parseSchedule({ cron, timeZone });
          const a = nextRun(s, t);
          expect(a).toBeGreaterThan(t);
          expect(nextRun(s, a)).toBeGreaterThan(a);
          expect(nextRun(s, a - 1)).toBe(a);
        },
      ),
      { numRuns: 200 },
    );
  });
});
