import type { Condition, JsonObject } from '../src';
import { evaluateCondition, parseCondition } from '../src';

const asOf = Date.parse('2025-03-01T00:00:00Z');
const ctx = { asOf };
const DAY = 86_400_000;
const check = (cond: unknown, record: JsonObject) => evaluateCondition(parseCondition(cond), record, ctx);

describe('evaluateCondition', () => {
  describe('a missing field', () => {
    const record = { other: 1 };
    it.each(['eq', 'lt', 'lte', 'gt', 'gte'])('makes %s false', (op) => {
      expect(check({ field: 'a', op, value: 1 }, record)).toBe(false);
    });
    it('makes ne, in and prefix behave as "not equal / not a member / no prefix"', () => {
      expect(check({ field: 'a', op: 'ne', value: 1 }, record)).toBe(true);
      expect(check({ field: 'a', op: 'ne', value: null }, record)).toBe(true);
      expect(check({ field: 'a', op: 'in', value: [null] }, record)).toBe(false);
      expect(check({ field: 'a', op: 'prefix', value: '' }, record)).toBe(false);
    });
  });

  describe('exists', () => {
    it.each([
      [{ a: 0 }, true],
      [{ a: '' }, true],
      [{ a: false }, true],
      [{ a: {} }, true],
      [{ a: null }, false],
      [{}, false],
    ])('on %j is %s, and its negation with value:false', (record, present) => {
      expect(check({ field: 'a', op: 'exists' }, record as JsonObject)).toBe(present);
      expect(check({ field: 'a', op: 'exists', value: true }, record as JsonObject)).toBe(present);
      expect(check({ field: 'a', op: 'exists', value: false }, record as JsonObject)).toBe(!present);
    });
  });

  describe('eq and ne', () => {
    it.each([
      [1, 1, true],
      [1, 1.0, true],
      [0, -0, true],
      [1, '1', false],
      [1, true, false],
      [0, false, false],
      [null, null, true],
      ['a', 'a', true],
      [[1, [2, { x: 3 }]], [1, [2, { x: 3 }]], true],
      [[1, 2], [2, 1], false],
      [{ x: 1, y: [true] }, { y: [true], x: 1 }, true],
      [{ x: 1 }, { x: 1, y: null }, false],
      [{}, [], false],
    ])('compares %j with %j deeply: %s', (recordValue, value, equal) => {
      expect(check({ field: 'a', op: 'eq', value }, { a: recordValue })).toBe(equal);
      expect(check({ field: 'a', op: 'ne', value }, { a: recordValue })).toBe(!equal);
    });
  });

  describe('lt, lte, gt, gte', () => {
    const table: [unknown, 'lt' | 'lte' | 'gt' | 'gte', unknown, boolean][] = [
      [1, 'lt', 2, true],
      [2, 'lt', 2, false],
      [2, 'lte', 2, true],
      [3, 'gt', 2, true],
      [2, 'gte', 2, true],
      [-1.5, 'lt', -1, true],
      ['a', 'lt', 'b', true],
      ['b', 'lt', 'a', false],
      ['ab', 'gt', 'a', true],
      ['', 'lt', 'a', true],
      ['Z', 'lt', 'a', true],
      ['2025-01-01T00:00:00Z', 'lt', '2025-02-01T00:00:00Z', true],
      // Unicode code point order, as SQLite compares UTF-8: U+FFFF sorts before U+1F600.
      ['\uffff', 'lt', '\u{1F600}', true],
      // Mixed types never compare.
      ['10', 'gt', 9, false],
      [10, 'gt', '9', false],
      [true, 'gte', 0, false],
      [null, 'lte', 0, false],
      [[1], 'lt', 2, false],
      [{ x: 1 }, 'gte', 'x', false],
    ];
    it.each(table)('%j %s %j is %s', (recordValue, op, value, expected) => {
      expect(check({ field: 'a', op, value }, { a: recordValue } as JsonObject)).toBe(expected);
    });
  });

  describe('in', () => {
    it.each([
      ['x', ['x', 'y'], true],
      ['z', ['x', 'y'], false],
      [1, ['1'], false],
      ['1', [1], false],
      [1, [true], false],
      [true, [true], true],
      [null, [null], true],
      [0, [-0], true],
      [[1], [1], false],
      [{}, [null], false],
    ])('%j in %j is %s (strict membership of primitives)', (recordValue, value, expected) => {
      expect(check({ field: 'a', op: 'in', value }, { a: recordValue } as JsonObject)).toBe(expected);
    });
  });

  describe('prefix', () => {
    it.each([
      ['hello', 'he', true],
      ['hello', '', true],
      ['hello', 'hello', true],
      ['he', 'hello', false],
      ['Hello', 'he', false],
      [12, '1', false],
      [['he'], 'he', false],
      ['a\u0000b', 'a\u0000', true],
      // By code point: a prefix ending in half a surrogate pair does not match the pair.
      ['\u{1F600}x', '\ud83d', false],
    ])('%j has prefix %j: %s', (recordValue, value, expected) => {
      expect(check({ field: 'a', op: 'prefix', value }, { a: recordValue } as JsonObject)).toBe(expected);
    });
  });

  describe('nested paths', () => {
    const record = { limits: { daily: 5, tags: ['a'] }, list: [{ x: 1 }], name: 'n' };
    it('reach into objects', () => {
      expect(check({ field: 'limits.daily', op: 'eq', value: 5 }, record)).toBe(true);
      expect(check({ field: 'limits.tags', op: 'eq', value: ['a'] }, record)).toBe(true);
    });
    it('do not enter arrays or primitives', () => {
      expect(check({ field: 'list.x', op: 'exists' }, record)).toBe(false);
      expect(check({ field: 'limits.tags.length', op: 'exists' }, record)).toBe(false);
      expect(check({ field: 'name.length', op: 'exists' }, record)).toBe(false);
      expect(check({ field: 'limits.monthly', op: 'exists' }, record)).toBe(false);
      expect(check({ field: 'limits.daily.x', op: 'ne', value: 1 }, record)).toBe(true);
    });
    it('only see own properties, never the prototype chain', () => {
      const inherited = Object.create({ a: 1 }) as JsonObject;
      expect(check({ field: 'a', op: 'exists' }, inherited)).toBe(false);
      expect(check({ field: 'toString', op: 'exists' }, {})).toBe(false);
      expect(check({ field: 'hasOwnProperty', op: 'exists' }, {})).toBe(false);
    });
  });

  describe('relative times', () => {
    const cond = { field: 'lastActiveAt', op: 'lt', value: { $ago: 'P30D' } };
    it.each([
      [asOf - 31 * DAY, true],
      [asOf - 30 * DAY - 1, true],
      [asOf - 30 * DAY, false],
      [asOf - DAY, false],
      [new Date(asOf - 31 * DAY).toISOString(), false],
    ])('lastActiveAt %j is older than 30 days: %s', (lastActiveAt, expected) => {
      expect(check(cond, { lastActiveAt })).toBe(expected);
    });
  });

  describe('all, any, not', () => {
    const t = { field: 'a', op: 'exists' };
    const f = { field: 'b', op: 'exists' };
    const record = { a: 1 };
    it.each([
      [{ all: [t] }, true],
      [{ all: [t, f] }, false],
      [{ any: [f, t] }, true],
      [{ any: [f] }, false],
      [{ not: t }, false],
      [{ not: { not: t } }, true],
      [{ all: [t, { any: [f, { not: f }] }] }, true],
    ])('%j is %s', (cond, expected) => {
      expect(check(cond, record)).toBe(expected);
    });
  });

  it('never throws on an unexpected record shape', () => {
    const cond = parseCondition({
      any: [
        { field: 'a.b.c', op: 'lt', value: 1 },
        { field: 'a', op: 'prefix', value: 'x' },
        { field: 'a.b', op: 'eq', value: { c: [1] } },
        { field: 'a', op: 'in', value: [1] },
      ],
    }) as Condition;
    const shapes: unknown[] = [{}, { a: null }, { a: [] }, { a: { b: null } }, { a: { b: [1, 2] } }, { a: 'str' }];
    for (const shape of shapes) expect(() => evaluateCondition(cond, shape as JsonObject, ctx)).not.toThrow();
    expect(() => evaluateCondition(cond, null as unknown as JsonObject, ctx)).not.toThrow();
  });
});
