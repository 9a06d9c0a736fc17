import { RULE_LIMITS, RuleValidationError, isRelativeTime, parseDurationMs, resolveOperand } from '../src';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('parseDurationMs', () => {
  it.each([
    ['P30D', 30 * DAY],
    ['P2W', 14 * DAY],
    ['PT12H', 12 * HOUR],
    ['PT90M', 90 * MINUTE],
    ['PT45S', 45 * SECOND],
    ['P1DT12H', DAY + 12 * HOUR],
    ['P1W1DT1H1M1S', 8 * DAY + HOUR + MINUTE + SECOND],
    ['P0D', 0],
  ])('reads %s', (s, ms) => {
    expect(parseDurationMs(s)).toBe(ms);
  });

  it.each(['P1Y', 'P1M', 'P1Y2M3D', 'P2M1DT1H'])('rejects %s: years and months have no fixed length', (s) => {
    expect(() => parseDurationMs(s)).toThrow('uses years or months, which have no fixed length');
  });

  it.each(['', 'P', 'PT', 'P1DT', '30D', 'p30d', 'P-1D', 'P1.5D', 'PT1H1D', 'P1D ', 'P1H'])('rejects %j', (s) => {
    expect(() => parseDurationMs(s)).toThrow(RuleValidationError);
  });

  it('rejects durations beyond the safe integer range', () => {
    expect(() => parseDurationMs('P99999999999999D')).toThrow('is too long');
  });

  it('rejects durations past RULE_LIMITS.maxDurationDays, so asOf minus any duration is a valid Date', () => {
    // Safe integers of ms, yet 1970 minus them is before the first day a Date can hold.
    expect(() => parseDurationMs('P104000000D')).toThrow('is too long');
    const days = RULE_LIMITS.maxDurationDays;
    expect(parseDurationMs(`P${days}D`)).toBe(days * DAY);
    for (const s of [`P${days + 1}D`, `PT${days * 24 + 1}H`, 'P1000000000D', `P${Math.ceil(days / 7) + 1}W`]) {
      expect(() => parseDurationMs(s)).toThrow(`is too long: at most ${days} days`);
    }
    // The earliest asOf (1970) minus the longest duration: still a Date that renders.
    const earliest = resolveOperand({ $ago: `P${days}D` }, { asOf: 0 }) as number;
    expect(new Date(earliest).toISOString()).toMatch(/^-00\d{4}-/);
  });
});

describe('resolveOperand', () => {
  const ctx = { asOf: Date.parse('2025-03-01T00:00:00Z') };

  it('resolves {"$ago": duration} to asOf minus the duration, in epoch ms', () => {
    expect(resolveOperand({ $ago: 'P30D' }, ctx)).toBe(Date.parse('2025-01-30T00:00:00Z'));
    expect(resolveOperand({ $ago: 'PT0S' }, ctx)).toBe(ctx.asOf);
  });

  it('returns any other operand as it is', () => {
    const value = { since: 'P30D' };
    expect(resolveOperand(value, ctx)).toBe(value);
    expect(resolveOperand('P30D', ctx)).toBe('P30D');
    expect(resolveOperand(null, ctx)).toBeNull();
  });

  it('recognises relative times by an own "$ago" key only', () => {
    expect(isRelativeTime({ $ago: 'P1D' })).toBe(true);
    expect(isRelativeTime(Object.create({ $ago: 'P1D' }))).toBe(false);
    expect(isRelativeTime(['$ago'])).toBe(false);
  });
});
