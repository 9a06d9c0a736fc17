import fc from 'fast-check';
import type { Condition, JsonObject, JsonPrimitive, JsonValue, Operand } from '../src';
import { compileConditionToSql, evaluateCondition, validateCondition } from '../src';
import { RecordTable } from './sqlite';

// The pre-filter contract, checked against real SQLite: it never drops a record that
// evaluateCondition accepts, and when it claims to be exact it selects exactly those records.

const asOf = Date.parse('2025-03-01T00:00:00Z');
const ctx = { asOf };
const DAY = 86_400_000;

// Few names and nearby values, so conditions and records actually meet.
const key = fc.constantFrom('a', 'b', 'c');
const field = fc.constantFrom('a', 'b', 'a.b', 'a.c', 'b.a', 'a.b.c');
const trickyString = fc.constantFrom(
  '',
  'a',
  'ab',
  'b',
  'A',
  'a\u0000b',
  'é',
  '\uffff',
  '\u{1F600}',
  '\ud83d',
  '\ude00x',
);
const str = fc.oneof(trickyString, fc.string({ maxLength: 3 }), fc.string({ unit: 'binary', maxLength: 3 }));
const trickyNumber = fc.constantFrom(0, -0, 1, -1, 0.5, 2 ** 53, 2 ** 60, 1e21, 1e-7, asOf - 30 * DAY, 1e100, 5e-324);
const num = fc.oneof(
  trickyNumber,
  fc.integer({ min: -3, max: 3 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const primitive: fc.Arbitrary<JsonPrimitive> = fc.oneof(str, num, fc.boolean(), fc.constant(null));

const { value: jsonValue } = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    primitive,
    fc.array(tie('value'), { maxLength: 2 }),
    fc.dictionary(key, tie('value'), { maxKeys: 3 }) as fc.Arbitrary<JsonValue>,
  ),
}));
const record = fc.dictionary(key, jsonValue, { maxKeys: 3 }) as fc.Arbitrary<JsonObject>;

const relativeTime = fc.constantFrom('P30D', 'PT1H', 'P1DT12H').map((d): Operand => ({ $ago: d }));
const orderable: fc.Arbitrary<Operand> = fc.oneof(str, num, relativeTime);
const leaf: fc.Arbitrary<Condition> = fc.oneof(
  fc.record({ field, op: fc.constantFrom('eq' as const, 'ne' as const), value: fc.oneof(jsonValue, relativeTime) }),
  fc.record({
    field,
    op: fc.constantFrom('lt' as const, 'lte' as const, 'gt' as const, 'gte' as const),
    value: orderable,
  }),
  fc.record({ field, op: fc.constant('in' as const), value: fc.array(primitive, { minLength: 1, maxLength: 4 }) }),
  fc.record({ field, op: fc.constant('exists' as const), value: fc.boolean() }),
  fc.record({ field, op: fc.constant('exists' as const) }),
  fc.record({ field, op: fc.constant('prefix' as const), value: str }),
);
const { condition } = fc.letrec<{ condition: Condition }>((tie) => ({
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ all: fc.array(tie('condition'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ any: fc.array(tie('condition'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ not: tie('condition') }),
  ),
}));

let table: RecordTable;
beforeAll(() => {
  table = new RecordTable();
});
afterAll(() => table.close());

describe('the SQL pre-filter', () => {
  it('keeps every record evaluateCondition accepts, and agrees exactly when it says it is exact', () => {
    fc.assert(
      fc.property(condition, fc.array(record, { maxLength: 8 }), (cond, records) => {
        expect(validateCondition(cond)).toEqual([]);
        // Records are stored as JSON text, so evaluate what a reader of that text sees.
        const stored = records.map((r) => JSON.parse(JSON.stringify(r)) as JsonObject);
        table.fill(stored);
        const filter = compileConditionToSql(cond, ctx);
        // Never NULL: a NULL would turn into a wrong answer under NOT.
        const values = table.filterValues(filter);
        stored.forEach((r, id) => {
          expect([0, 1]).toContain(values[id]);
          const selected = values[id] === 1;
          const accepted = evaluateCondition(cond, r, ctx);
          if (accepted) expect(selected).toBe(true);
          if (filter.exact) expect(selected).toBe(accepted);
        });
      }),
      { numRuns: 3000 },
    );
  });

  // The exactness of numeric comparisons rests on SQLite reading moderate JSON numbers to the same
  // double JSON.parse gives (it can be an ulp off beyond about 1e±80); this checks that premise.
  it('relies on SQLite reading every JSON number between 1e-60 and 1e60 exactly', () => {
    const moderate = fc.oneof(
      fc.double({ min: 1e-60, max: 1e60, noNaN: true }),
      fc.double({ min: -1e60, max: -1e-60, noNaN: true }),
      fc.integer(),
      fc.maxSafeInteger(),
    );
    fc.assert(
      fc.property(fc.array(moderate, { minLength: 1, maxLength: 50 }), (values) => {
        const records = values.map((a) => ({ a }));
        table.fill(records);
        values.forEach((a, id) => {
          const filter = compileConditionToSql({ field: 'a', op: 'eq', value: a }, ctx);
          expect(filter.exact).toBe(true);
          expect(table.select(filter)).toContain(id);
        });
      }),
      { numRuns: 200 },
    );
  });
});
