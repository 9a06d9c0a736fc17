import { decodeEvent, encodeEvent, MAX_KEY_BYTES, type DomainEvent } from '../src';
import { decodeFailure, json, key } from './helpers';

describe('decodeEvent', () => {
  it('round-trips an event through encodeEvent', () => {
    const event: DomainEvent = { type: 'payment', at: 1_700_000_000_000, data: { amount: -250 }, id: 'evt-1' };
    expect(decodeEvent(key('acct-1'), encodeEvent(event))).toEqual(event);
  });

  it('normalizes an ISO-8601 `at` to epoch ms', () => {
    const at = (s: string) => decodeEvent(key('k'), json({ type: 't', at: s })).at;
    expect(at('2024-03-01T12:00:00Z')).toBe(Date.UTC(2024, 2, 1, 12));
    expect(at('2024-03-01T12:00:00.123+02:00')).toBe(Date.UTC(2024, 2, 1, 10, 0, 0, 123));
    expect(at('2024-03-01T12:00-0130')).toBe(Date.UTC(2024, 2, 1, 13, 30));
    expect(at('2024-03-01')).toBe(Date.UTC(2024, 2, 1));
    expect(at('2024-02-29T00:00:00.123456789Z')).toBe(Date.UTC(2024, 1, 29, 0, 0, 0, 123));
  });

  it('defaults `data` to {} and drops unknown top-level fields', () => {
    const event = decodeEvent(key('k'), json({ type: 'activity', at: 5, extra: true }));
    expect(event).toEqual({ type: 'activity', at: 5, data: {} });
    expect('id' in event).toBe(false);
  });

  it('rejects a missing or empty key with KEY_MISSING', () => {
    for (const k of [null, Buffer.alloc(0)]) {
      const err = decodeFailure(() => decodeEvent(k, json({ type: 't', at: 1 })));
      expect(err.code).toBe('KEY_MISSING');
      expect(err.reason).toBe('key: expected a non-empty message key');
    }
  });

  it('rejects a key over 512 bytes or not UTF-8 with KEY_INVALID', () => {
    const long = decodeFailure(() => decodeEvent(Buffer.alloc(MAX_KEY_BYTES + 1, 'a'), json({ type: 't', at: 1 })));
    expect(long.code).toBe('KEY_INVALID');
    expect(long.reason).toBe('key: 513 bytes exceeds the limit of 512 bytes');
    expect(decodeEvent(Buffer.alloc(MAX_KEY_BYTES, 'a'), json({ type: 't', at: 1 })).type).toBe('t');

    const latin1 = decodeFailure(() => decodeEvent(Buffer.from([0x61, 0xff]), json({ type: 't', at: 1 })));
    expect(latin1.code).toBe('KEY_INVALID');
    expect(latin1.reason).toBe('key: not valid UTF-8');
  });

  it('rejects a null value with VALUE_MISSING', () => {
    const err = decodeFailure(() => decodeEvent(key('k'), null));
    expect(err.code).toBe('VALUE_MISSING');
    expect(err.reason).toBe('value: expected a JSON object, got a null value');
  });

  it('rejects a value that is not JSON with NOT_JSON', () => {
    const err = decodeFailure(() => decodeEvent(key('k'), Buffer.from('{"type":')));
    expect(err.code).toBe('NOT_JSON');
    expect(err.reason).toMatch(/^value: not valid JSON \(/);
    expect(err.cause).toBeInstanceOf(SyntaxError);
  });

  it('rejects `at` that is neither epoch ms nor an ISO-8601 instant, naming the field', () => {
    const reasonFor = (at: unknown) => decodeFailure(() => decodeEvent(key('k'), json({ type: 't', at }))).reason;
    const expected = 'value.at: expected a number (epoch ms) or ISO-8601 string';
    expect(reasonFor(undefined)).toBe(`${expected}, got nothing`);
    expect(reasonFor(true)).toBe(`${expected}, got a boolean`);
    expect(reasonFor(1.5)).toBe(`${expected}, got the number 1.5 (epoch ms must be a non-negative integer)`);
    expect(reasonFor(-1)).toMatch(/^value\.at: .*non-negative integer\)$/);
    // Not ISO, an impossible date, and a date-time without offset (ambiguous local time).
    for (const text of [
      'yesterday',
      'March 7, 2024',
      '2024-02-30',
      '2023-02-29',
      '2024-03-01T12:00:00',
      '1969-12-31',
    ]) {
      expect(reasonFor(text)).toBe(
        `${expected}, got a string that is not an ISO-8601 date or date-time with offset at or after 1970`,
      );
    }
  });

  it('rejects a bad `type`, `data` or `id` with SCHEMA_INVALID naming the field', () => {
    const failure = (value: unknown) => decodeFailure(() => decodeEvent(key('k'), json(value)));
    expect(failure({ type: '', at: 1 }).reason).toBe(
      'value.type: expected a non-empty string of at most 64 characters, got an empty string',
    );
    expect(failure({ type: 'x'.repeat(65), at: 1 }).reason).toBe(
      'value.type: expected a non-empty string of at most 64 characters, got a string of 65 characters',
    );
    expect(failure({ type: 't', at: 1, data: [1] }).reason).toBe('value.data: expected an object, got an array');
    expect(failure({ type: 't', at: 1, data: null }).reason).toBe('value.data: expected an object, got null');
    expect(failure({ type: 't', at: 1, id: 7 }).reason).toBe(
      'value.id: expected a non-empty string of at most 200 characters, got the number 7',
    );
    expect(failure([{ type: 't', at: 1 }]).reason).toBe('value: expected a JSON object, got an array');
    expect(failure({ type: 't', at: 1, data: [] }).code).toBe('SCHEMA_INVALID');
  });
});
