import { RULE_LIMITS, RuleValidationError, parseCondition, validateCondition } from '../src';

const issuesOf = (x: unknown) => validateCondition(JSON.parse(JSON.stringify(x)));

describe('validateCondition', () => {
  it('accepts every node kind and operator', () => {
    const cond = {
      all: [
        { field: 'status', op: 'eq', value: 'active' },
        { field: 'lastActiveAt', op: 'lt', value: { $ago: 'P30D' } },
        {
          any: [
            { field: 'plan.tier', op: 'in', value: ['gold', 1, true, null] },
            { field: 'x', op: 'exists' },
          ],
        },
        { not: { field: 'email', op: 'prefix', value: 'test+' } },
        { field: 'tags', op: 'ne', value: ['a', { b: 1 }] },
        { field: 'n', op: 'gte', value: 10 },
        { field: 'deleted', op: 'exists', value: false },
      ],
    };
    expect(issuesOf(cond)).toEqual([]);
    expect(parseCondition(cond)).toBe(cond);
  });

  it('names an unknown operator with the operators it expected', () => {
    expect(
      issuesOf({
        all: [
          { field: 'a', op: 'eq', value: 1 },
          { field: 'b', op: 'eqq', value: 1 },
        ],
      }),
    ).toEqual([
      {
        path: '/condition/all/1/op',
        message: 'unknown operator "eqq"; expected one of eq, ne, lt, lte, gt, gte, in, exists, prefix',
      },
    ]);
  });

  it.each([
    ['a non-object node', 'status', '/condition', 'expected a condition object, got string'],
    ['an array node', [], '/condition', 'expected a condition object, got array'],
    ['a node of no kind', { op: 'eq' }, '/condition', 'expected one of the keys all, any, not, field'],
    ['a node of two kinds', { all: [], any: [] }, '/condition', 'ambiguous condition: has both "all" and "any"'],
    ['an empty all', { all: [] }, '/condition/all', 'must not be empty'],
    ['an empty any', { any: [] }, '/condition/any', 'must not be empty'],
    ['a non-array any', { any: {} }, '/condition/any', 'expected an array of conditions, got object'],
    [
      'an unknown key on a group',
      { all: [{ field: 'a', op: 'exists' }], x: 1 },
      '/condition/x',
      'unknown key "x"; expected all',
    ],
    [
      'an unknown key on a leaf',
      { field: 'a', op: 'exists', vlaue: 1 },
      '/condition/vlaue',
      'unknown key "vlaue"; expected field, op, value',
    ],
    ['a missing op', { field: 'a', value: 1 }, '/condition/op', 'required'],
    ['a non-string op', { field: 'a', op: 1, value: 1 }, '/condition/op', 'expected an operator string, got number'],
    ['a missing value', { field: 'a', op: 'eq' }, '/condition/value', 'required for operator "eq"'],
    ['a non-string field', { field: 3, op: 'exists' }, '/condition/field', 'expected a field path string, got number'],
    ['an empty field', { field: '', op: 'exists' }, '/condition/field', 'field path must not be empty'],
    [
      'a bad segment',
      { field: 'a.1b', op: 'exists' },
      '/condition/field',
      'field path "a.1b": segment "1b" must match [A-Za-z_][A-Za-z0-9_]*',
    ],
    [
      'an empty segment',
      { field: 'a..b', op: 'exists' },
      '/condition/field',
      'field path "a..b": segment "" must match [A-Za-z_][A-Za-z0-9_]*',
    ],
    [
      'too many segments',
      { field: 'a.b.c.d.e.f.g.h.i', op: 'exists' },
      '/condition/field',
      'field path "a.b.c.d.e.f.g.h.i" has 9 segments; at most 8 are allowed',
    ],
    [
      'a boolean for lt',
      { field: 'a', op: 'lt', value: true },
      '/condition/value',
      'expected a number, a string or {"$ago": duration} for "lt", got boolean',
    ],
    [
      'an object for gte',
      { field: 'a', op: 'gte', value: { a: 1 } },
      '/condition/value',
      'expected a number, a string or {"$ago": duration} for "gte", got object',
    ],
    [
      'a non-array in',
      { field: 'a', op: 'in', value: 'x' },
      '/condition/value',
      'expected an array of primitives, got string',
    ],
    ['an empty in', { field: 'a', op: 'in', value: [] }, '/condition/value', 'must not be empty'],
    [
      'an object in an in list',
      { field: 'a', op: 'in', value: [1, { b: 2 }] },
      '/condition/value/1',
      'expected a string, number, boolean or null, got object',
    ],
    [
      'a non-boolean exists',
      { field: 'a', op: 'exists', value: 'yes' },
      '/condition/value',
      'expected a boolean, got string',
    ],
    [
      'a non-string prefix',
      { field: 'a', op: 'prefix', value: 1 },
      '/condition/value',
      'expected a string, got number',
    ],
    [
      'an unknown $ operand',
      { field: 'a', op: 'eq', value: { $now: true } },
      '/condition/value/$now',
      'unknown operand "$now"; the only operand is {"$ago": duration}',
    ],
    [
      'a key next to $ago',
      { field: 'a', op: 'lt', value: { $ago: 'P1D', x: 1 } },
      '/condition/value/x',
      'unexpected key "x" next to "$ago"',
    ],
    [
      'a "__proto__" key in a value',
      JSON.parse('{"field":"a","op":"eq","value":{"__proto__":{"x":1}}}'),
      '/condition/value/__proto__',
      'key "__proto__" is not allowed',
    ],
  ])('rejects %s', (_what, cond, path, message) => {
    expect(issuesOf(cond)).toEqual([{ path, message }]);
  });

  it('rejects durations in years or months, and malformed ones', () => {
    expect(issuesOf({ field: 'a', op: 'lt', value: { $ago: 'P1M' } })).toEqual([
      {
        path: '/condition/value/$ago',
        message: 'duration "P1M" uses years or months, which have no fixed length; use weeks or days',
      },
    ]);
    const [issue] = issuesOf({ field: 'a', op: 'lt', value: { $ago: '30 days' } });
    expect(issue).toEqual({
      path: '/condition/value/$ago',
      message: expect.stringMatching(/^invalid duration "30 days"/),
    });
  });

  it('reports every issue, each at its own path, under a custom base path', () => {
    const issues = validateCondition(
      { any: [{ field: 'a', op: 'lt' }, { not: { field: '__proto__', op: 'exists' } }] },
      '/rule/where',
    );
    expect(issues).toEqual([
      { path: '/rule/where/any/0/value', message: 'required for operator "lt"' },
      {
        path: '/rule/where/any/1/not/field',
        message: 'field path "__proto__": segment "__proto__" is reserved and not allowed',
      },
    ]);
  });

  it('escapes "/" and "~" in paths as JSON pointers do', () => {
    expect(issuesOf({ field: 'a', op: 'exists', 'x/y~z': 1 })).toEqual([
      { path: '/condition/x~1y~0z', message: 'unknown key "x/y~z"; expected field, op, value' },
    ]);
  });

  it('rejects values that are not plain JSON', () => {
    expect(validateCondition({ field: 'a', op: 'eq', value: new Date(0) })).toEqual([
      { path: '/condition/value', message: 'expected a JSON value, got object' },
    ]);
    expect(validateCondition({ field: 'a', op: 'eq', value: [Number.NaN] })).toEqual([
      { path: '/condition/value/0', message: 'expected a finite number, got NaN' },
    ]);
    expect(validateCondition({ field: 'a', op: 'eq', value: undefined })).toEqual([
      { path: '/condition/value', message: 'expected a JSON value, got undefined' },
    ]);
  });

  it(`rejects conditions nested deeper than ${RULE_LIMITS.maxDepth} levels`, () => {
    let cond: unknown = { field: 'a', op: 'exists' };
    for (let i = 1; i < RULE_LIMITS.maxDepth; i++) cond = { not: cond };
    expect(validateCondition(cond)).toEqual([]);
    const issues = validateCondition({ not: cond });
    expect(issues).toEqual([
      { path: `/condition${'/not'.repeat(32)}`, message: 'condition is nested deeper than 32 levels' },
    ]);
  });

  it('stays cheap on hostile nesting', () => {
    let cond: unknown = { field: 'a', op: 'exists' };
    for (let i = 0; i < 100_000; i++) cond = { not: cond };
    expect(validateCondition(cond)).toHaveLength(1);
  });

  it(`rejects more than ${RULE_LIMITS.maxNodes} nodes, counting in-list elements`, () => {
    const leaves = (n: number) => Array.from({ length: n }, () => ({ field: 'a', op: 'exists' }));
    expect(validateCondition({ all: leaves(999) })).toEqual([]);
    expect(validateCondition({ all: leaves(1000) })).toEqual([
      { path: '/condition', message: 'condition has more than 1000 nodes' },
    ]);
    const list = Array.from({ length: 1000 }, (_, i) => i);
    expect(validateCondition({ field: 'a', op: 'in', value: list })).toEqual([
      { path: '/condition', message: 'condition has more than 1000 nodes' },
    ]);
  });

  it('throws a non-retriable RuleValidationError listing the issues from parseCondition', () => {
    let error: unknown;
    try {
      parseCondition({ all: [{ field: 'a', op: 'eqq', value: 1 }] });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(RuleValidationError);
    const e = error as RuleValidationError;
    expect(e.code).toBe('RULE_INVALID');
    expect(e.retriable).toBe(false);
    expect(e.issues).toEqual([
      { path: '/condition/all/0/op', message: expect.stringContaining('unknown operator "eqq"') },
    ]);
    expect(e.message).toBe(`invalid rule (1 issue): /condition/all/0/op: ${e.issues[0]?.message}`);
  });
});
