import type { Action, JsonObject } from '../src';
import { RuleApplyError, applyAction, evaluateCondition, validateAction, validateCondition } from '../src';

const ctx = { asOf: 0 };
const polluted = () =>
  ['x', 'polluted', 'y'].some((k) => k in Object.prototype) || Object.getPrototypeOf({}) !== Object.prototype;

afterEach(() => {
  expect(polluted()).toBe(false);
});

describe('prototype pollution', () => {
  it.each([
    ['{"set":{"__proto__.x":1}}', '/action/set/__proto__.x', '"__proto__.x": segment "__proto__"'],
    ['{"set":{"constructor.prototype.x":1}}', '/action/set/constructor.prototype.x', 'segment "constructor"'],
    ['{"set":{"a.prototype":1}}', '/action/set/a.prototype', 'segment "prototype"'],
    ['{"unset":["__proto__"]}', '/action/unset/0', 'segment "__proto__"'],
    ['{"increment":{"constructor.x":1}}', '/action/increment/constructor.x', 'segment "constructor"'],
    ['{"set":{"a":{"__proto__":{"x":1}}}}', '/action/set/a/__proto__', 'key "__proto__" is not allowed'],
    ['{"domain":"d","params":{"__proto__":{"x":1}}}', '/action/params/__proto__', 'key "__proto__" is not allowed'],
  ])('validation rejects %s', (json, path, message) => {
    const issues = validateAction(JSON.parse(json));
    expect(issues).toEqual([{ path, message: expect.stringContaining(message) }]);
  });

  it('validation rejects reserved segments in condition fields', () => {
    for (const field of ['__proto__', 'constructor', 'a.prototype', 'constructor.prototype.x']) {
      expect(validateCondition({ field, op: 'exists' })).toEqual([
        { path: '/condition/field', message: expect.stringContaining('is reserved and not allowed') },
      ]);
    }
  });

  it('applying an unvalidated malicious action throws and leaves Object.prototype untouched', () => {
    for (const action of [
      { set: { '__proto__.x': 1 } },
      { set: { 'constructor.prototype.x': 1 } },
      { increment: { '__proto__.x': 1 } },
      { unset: ['__proto__.hasOwnProperty'] },
    ] as Action[]) {
      expect(() => applyAction(action, {}, ctx)).toThrow(RuleApplyError);
    }
  });

  it('a "__proto__" key inside a set value stays an own data property', () => {
    const action = { set: { a: JSON.parse('{"__proto__":{"x":1}}') as JsonObject } };
    const outcome = applyAction(action, {}, ctx);
    const a = (outcome as { value: JsonObject }).value.a as object;
    expect(Object.getPrototypeOf(a)).toBe(Object.prototype);
    expect(Object.keys(a)).toEqual(['__proto__']);
    expect((a as { x?: number }).x).toBeUndefined();
  });

  it('a record with an own "__proto__" key is copied without changing any prototype', () => {
    const current = JSON.parse('{"__proto__":{"x":1},"n":1}') as JsonObject;
    const outcome = applyAction({ increment: { n: 1 } }, current, ctx);
    const value = (outcome as { value: JsonObject }).value;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__', 'n']);
    expect((value as { x?: number }).x).toBeUndefined();
  });

  it('evaluation never reads inherited properties', () => {
    expect(evaluateCondition({ field: 'constructor', op: 'exists' }, {}, ctx)).toBe(false);
    expect(evaluateCondition({ field: '__proto__', op: 'exists' }, {}, ctx)).toBe(false);
    expect(evaluateCondition({ field: 'toString', op: 'exists' }, {}, ctx)).toBe(false);
  });
});
