import { RuleValidationError, parseAction, validateAction } from '../src';

describe('validateAction', () => {
  it.each([
    [{ set: { status: 'dormant', 'meta.reason': { code: 1 } } }],
    [{ unset: ['session'] }],
    [{ increment: { 'stats.sweeps': 1, balance: -2.5 } }],
    [{ set: { a: 1 }, unset: ['b'], increment: { c: 1 } }],
    [{ set: {}, unset: ['b'] }],
    [{ delete: true }],
    [{ domain: 'archive' }],
    [{ domain: 'archive', params: { reason: 'inactive' } }],
  ])('accepts %j', (action) => {
    expect(validateAction(action)).toEqual([]);
    expect(parseAction(action)).toBe(action);
  });

  it.each([
    ['a non-object', [], '/action', 'expected an action object, got array'],
    [
      'an empty action',
      {},
      '/action',
      'empty action: name at least one field in set, unset or increment, or use delete or domain',
    ],
    [
      'only empty parts',
      { set: {}, unset: [], increment: {} },
      '/action',
      'empty action: name at least one field in set, unset or increment, or use delete or domain',
    ],
    [
      'an unknown key',
      { set: { a: 1 }, sett: {} },
      '/action/sett',
      'unknown key "sett"; expected set, unset, increment, or delete, or domain',
    ],
    ['a non-object set', { set: [1] }, '/action/set', 'expected an object of field paths, got array'],
    [
      'a bad set field',
      { set: { 'a.': 1 } },
      '/action/set/a.',
      'field path "a.": segment "" must match [A-Za-z_][A-Za-z0-9_]*',
    ],
    [
      'a non-JSON set value',
      { set: { a: Number.POSITIVE_INFINITY } },
      '/action/set/a',
      'expected a finite number, got Infinity',
    ],
    ['a non-array unset', { unset: 'a' }, '/action/unset', 'expected an array of field paths, got string'],
    ['a bad unset field', { unset: ['ok', 7] }, '/action/unset/1', 'expected a field path string, got number'],
    [
      'a non-number increment',
      { increment: { a: '1' } },
      '/action/increment/a',
      'expected a finite number, got string',
    ],
    ['a NaN increment', { increment: { a: Number.NaN } }, '/action/increment/a', 'expected a finite number, got NaN'],
    ['a field in set and unset', { set: { a: 1 }, unset: ['a'] }, '/action/unset/0', 'field "a" also appears in set'],
    [
      'a field in set and increment',
      { set: { a: 1 }, increment: { a: 1 } },
      '/action/increment/a',
      'field "a" also appears in set',
    ],
    [
      'a field in unset and increment',
      { unset: ['n'], increment: { n: 1 } },
      '/action/increment/n',
      'field "n" also appears in unset',
    ],
    ['a field twice in unset', { unset: ['n', 'n'] }, '/action/unset/1', 'field "n" also appears in unset'],
    [
      'a field inside another',
      { set: { a: { b: 1 } }, increment: { 'a.b': 1 } },
      '/action/increment/a.b',
      'field "a.b" overlaps field "a" in set',
    ],
    [
      'a field inside another in one map',
      { set: { 'a.b': 1, a: 2 } },
      '/action/set/a',
      'field "a" overlaps field "a.b" in set',
    ],
    ['delete other than true', { delete: 1 }, '/action/delete', 'expected true, got number'],
    ['delete combined with set', { delete: true, set: { a: 1 } }, '/action/set', '"delete" must stand alone'],
    ['delete combined with domain', { delete: true, domain: 'x' }, '/action/domain', '"delete" must stand alone'],
    [
      'domain combined with set',
      { domain: 'x', set: { a: 1 } },
      '/action/set',
      'unknown key "set"; a domain action has only domain, params',
    ],
    ['a non-string domain', { domain: 1 }, '/action/domain', 'expected a domain action name, got number'],
    ['an empty domain', { domain: '' }, '/action/domain', 'expected a domain action name, got string'],
    ['non-object params', { domain: 'x', params: [1] }, '/action/params', 'expected an object, got array'],
    [
      'non-JSON params',
      { domain: 'x', params: { at: new Date(0) } },
      '/action/params/at',
      'expected a JSON value, got object',
    ],
  ])('rejects %s', (_what, action, path, message) => {
    expect(validateAction(action)).toEqual([{ path, message }]);
  });

  it('checks a domain action name against the known ones when given', () => {
    expect(validateAction({ domain: 'archive' }, '/action', ['archive', 'close'])).toEqual([]);
    expect(validateAction({ domain: 'achive' }, '/cmd/action', ['archive', 'close'])).toEqual([
      { path: '/cmd/action/domain', message: 'unknown domain action "achive"; expected one of archive, close' },
    ]);
    expect(validateAction({ domain: 'archive' }, '/action', [])).toEqual([
      { path: '/action/domain', message: 'unknown domain action "archive"; no domain actions are registered' },
    ]);
    expect(() => parseAction({ domain: 'achive' }, ['archive'])).toThrow(RuleValidationError);
  });

  it('rejects more than 1000 fields', () => {
    const set = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}`, i]));
    expect(validateAction({ set })).toEqual([{ path: '/action', message: 'action names more than 1000 fields' }]);
  });
});
