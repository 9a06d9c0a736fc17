import type { JsonObject } from '../src';
import { compileConditionToSql, evaluateCondition, parseCondition } from '../src';
import { RecordTable } from './sqlite';

const asOf = Date.parse('2025-03-01T00:00:00Z');
const ctx = { asOf };
const DAY = 86_400_000;
let table: RecordTable;
beforeAll(() => {
  table = new RecordTable();
});
afterAll(() => table.close());

/** Ids accepted by evaluateCondition and by the pre-filter, plus whether the pre-filter is exact. */
function both(cond: unknown, records: JsonObject[]) {
  const c = parseCondition(cond);
  const filter = compileConditionToSql(c, ctx);
  table.fill(records);
  const accepted = records.flatMap((r, i) => (evaluateCondition(c, r, ctx) ? [i] : []));
  return { accepted, selected: table.select(filter), exact: filter.exact };
}

describe('compileConditionToSql', () => {
  it('compiles the canonical sweep condition to an exact pre-filter', () => {
    const cond = parseCondition({
      all: [
        { field: 'status', op: 'eq', value: 'active' },
        { field: 'lastActiveAt', op: 'lt', value: { $ago: 'P30D' } },
      ],
    });
    const filter = compileConditionToSql(cond, ctx);
    expect(filter.exact).toBe(true);
    expect(filter.params).toEqual([
      '$.status',
      '$.status',
      'active',
      '$.lastActiveAt',
      '$.lastActiveAt',
      asOf - 30 * DAY,
    ]);
    expect(filter.sql).toBe(
      "((ifnull(json_type(value, ?), '') = 'text' AND json_extract(value, ?) = ?) AND " +
        "(ifnull(json_type(value, ?), '') IN ('integer', 'real') AND CAST(json_extract(value, ?) AS REAL) < ?))",
    );
    const records: JsonObject[] = [
      { status: 'active', lastActiveAt: asOf - 31 * DAY },
      { status: 'active', lastActiveAt: asOf - 29 * DAY },
      { status: 'closed', lastActiveAt: asOf - 31 * DAY },
      { status: 'active', lastActiveAt: String(asOf - 31 * DAY) },
      { status: 'active' },
      { lastActiveAt: asOf - 31 * DAY },
    ];
    table.fill(records);
    expect(table.select(filter)).toEqual([0]);
  });

  it('inlines only the column name, which must be an identifier', () => {
    const cond = parseCondition({ field: 'a', op: 'exists' });
    expect(compileConditionToSql(cond, ctx, 'r.doc').sql).toBe("ifnull(json_type(r.doc, ?), '') NOT IN ('', 'null')");
    expect(() => compileConditionToSql(cond, ctx, 'value); DROP TABLE x; --')).toThrow(RangeError);
  });

  it.each([
    ['eq on a number', { field: 'a', op: 'eq', value: 1 }],
    ['ne on a string', { field: 'a', op: 'ne', value: 'x' }],
    [
      'eq on booleans and null',
      {
        any: [
          { field: 'a', op: 'eq', value: true },
          { field: 'a', op: 'eq', value: null },
        ],
      },
    ],
    ['in over mixed primitives', { field: 'a', op: 'in', value: ['1', 1, false, null] }],
    ['prefix', { field: 'a', op: 'prefix', value: 'ab' }],
    ['exists:false', { field: 'a.b', op: 'exists', value: false }],
    [
      'not over exact nodes',
      {
        not: {
          all: [
            { field: 'a', op: 'gt', value: 1 },
            { field: 'b', op: 'lte', value: 'm' },
          ],
        },
      },
    ],
  ])('is exact for %s', (_what, cond) => {
    expect(compileConditionToSql(parseCondition(cond), ctx).exact).toBe(true);
  });

  it.each([
    ['eq on an array', { field: 'a', op: 'eq', value: [1] }],
    ['eq on an object', { field: 'a', op: 'eq', value: { b: 1 } }],
    ['a number too large to trust SQLite to parse exactly', { field: 'a', op: 'lt', value: 1e100 }],
    ['a string holding a lone surrogate', { field: 'a', op: 'eq', value: '\ud800' }],
  ])('is sound but inexact for %s', (_what, cond) => {
    expect(compileConditionToSql(parseCondition(cond), ctx).exact).toBe(false);
  });

  it('lets every row through for not over an inexact node', () => {
    const filter = compileConditionToSql(parseCondition({ not: { field: 'a', op: 'eq', value: [1] } }), ctx);
    expect(filter).toEqual({ sql: '1', params: [], exact: false });
  });

  it('keeps an inexact branch inside all sound and narrows with the exact ones', () => {
    const cond = { all: [{ field: 's', op: 'eq', value: 'x' }, { not: { field: 'a', op: 'eq', value: [1] } }] };
    const r = both(cond, [{ s: 'x', a: [1] }, { s: 'x', a: [2] }, { s: 'y' }]);
    expect(r).toEqual({ accepted: [1], selected: [0, 1], exact: false });
  });

  it('treats booleans, numbers and strings as distinct types, as evaluateCondition does', () => {
    const records: JsonObject[] = [{ a: true }, { a: 1 }, { a: '1' }, { a: false }, { a: 0 }, { a: null }, {}];
    expect(both({ field: 'a', op: 'eq', value: 1 }, records)).toEqual({ accepted: [1], selected: [1], exact: true });
    expect(both({ field: 'a', op: 'eq', value: true }, records)).toEqual({ accepted: [0], selected: [0], exact: true });
    expect(both({ field: 'a', op: 'gte', value: 0 }, records)).toEqual({
      accepted: [1, 4],
      selected: [1, 4],
      exact: true,
    });
    expect(both({ field: 'a', op: 'in', value: [0, '1'] }, records)).toEqual({
      accepted: [2, 4],
      selected: [2, 4],
      exact: true,
    });
    expect(both({ field: 'a', op: 'ne', value: 0 }, records)).toEqual({
      accepted: [0, 1, 2, 3, 5, 6],
      selected: [0, 1, 2, 3, 5, 6],
      exact: true,
    });
    expect(both({ field: 'a', op: 'exists' }, records)).toEqual({
      accepted: [0, 1, 2, 3, 4],
      selected: [0, 1, 2, 3, 4],
      exact: true,
    });
  });

  it('compares large integers as JSON.parse reads them', () => {
    // JSON.stringify(2 ** 60) is "1152921504606847000": SQLite reads that text as a different integer.
    const records: JsonObject[] = [{ a: 2 ** 60 }, { a: 2 ** 60 + 2 ** 8 }];
    expect(both({ field: 'a', op: 'lte', value: 2 ** 60 }, records)).toEqual({
      accepted: [0],
      selected: [0],
      exact: true,
    });
    expect(both({ field: 'a', op: 'eq', value: 2 ** 60 }, records)).toEqual({
      accepted: [0],
      selected: [0],
      exact: true,
    });
  });

  it('orders and prefixes strings by code point, including NUL and astral characters', () => {
    const records: JsonObject[] = [{ a: '\uffff' }, { a: '\u{1F600}' }, { a: 'a\u0000b' }, { a: 'a' }, { a: '\ud83d' }];
    expect(both({ field: 'a', op: 'lt', value: '\u{1F600}' }, records)).toEqual({
      accepted: [0, 2, 3, 4],
      selected: [0, 2, 3, 4],
      exact: true,
    });
    expect(both({ field: 'a', op: 'prefix', value: 'a\u0000' }, records)).toEqual({
      accepted: [2],
      selected: [2],
      exact: true,
    });
    expect(both({ field: 'a', op: 'prefix', value: '' }, records)).toEqual({
      accepted: [0, 1, 2, 3, 4],
      selected: [0, 1, 2, 3, 4],
      exact: true,
    });
  });

  it('does not enter arrays, as evaluateCondition does not', () => {
    const records: JsonObject[] = [{ a: [{ b: 1 }] }, { a: { b: 1 } }];
    expect(both({ field: 'a.b', op: 'eq', value: 1 }, records)).toEqual({ accepted: [1], selected: [1], exact: true });
  });
});
