import type { JsonObject } from '../src';
import { compileConditionToSql, evaluateCondition, parseCondition } from '../src';
import { largestConditions, recordsFor } from './largest-conditions';
import { RecordTable } from './sqlite';

// Issue 34 item 5: `{"any": [996 leaves]}` was accepted (1,000 nodes) and then failed every scan,
// its pre-filter a flat chain of ORs that SQLite parses one level per operand, past its expression
// depth limit of 1,000. The largest condition of every shape must compile to SQL that SQLite runs,
// and stay sound: it never drops a row the condition accepts.

const asOf = Date.parse('2026-11-01T00:00:00Z');
const records = recordsFor(200, asOf) as JsonObject[];
let table: RecordTable;
beforeAll(() => {
  table = new RecordTable();
  table.fill(records);
});
afterAll(() => table.close());

describe('the largest accepted condition of every shape', () => {
  const shapes = largestConditions();

  it('covers the node and depth limits', () => {
    expect(shapes.find((s) => s.shape === 'any of n leaves')!.n).toBeGreaterThanOrEqual(996);
    expect(shapes.find((s) => s.shape === 'not nested n deep')!.n).toBe(32);
  });

  it.each(shapes.map((s) => [s.shape, s.n, s.condition] as const))(
    '%s (n = %i) runs in SQLite and keeps every accepted row',
    (_shape, _n, condition) => {
      const c = parseCondition(condition);
      const filter = compileConditionToSql(c, { asOf });
      const selected = new Set(table.select(filter));
      const accepted = records.flatMap((r, i) => (evaluateCondition(c, r, { asOf }) ? [i] : []));
      expect(accepted.filter((i) => !selected.has(i))).toEqual([]);
      if (filter.exact) expect([...selected].sort((a, b) => a - b)).toEqual(accepted);
      expect(table.filterValues(filter).every((v) => v === 0 || v === 1)).toBe(true);
    },
  );
});

describe('AND and OR chains', () => {
  it('are balanced: 999 operands nest about log2(1000) parentheses deep, parameters in order', () => {
    const leaves = Array.from({ length: 999 }, (_, i) => ({ field: 'n', op: 'eq', value: i }));
    const filter = compileConditionToSql(parseCondition({ any: leaves }), { asOf });
    let depth = 0;
    let deepest = 0;
    for (const ch of filter.sql) {
      if (ch === '(') deepest = Math.max(deepest, ++depth);
      if (ch === ')') depth--;
    }
    expect(deepest).toBeLessThanOrEqual(14);
    expect(filter.params.filter((p) => typeof p === 'number')).toEqual(leaves.map((l) => l.value));
    table.fill([{ n: 0 }, { n: 998 }, { n: 999 }, { n: '5' }]);
    expect(table.select(filter)).toEqual([0, 1]);
    table.fill(records);
  });
});
