import type { DomainAction, JsonObject } from '../src';
import { RuleApplyError, RuleValidationError, applyAction, parseAction } from '../src';

const ctx = { asOf: Date.parse('2025-03-01T00:00:00Z') };
const deepFreeze = <T>(v: T): T => {
  if (typeof v === 'object' && v !== null) {
    Object.values(v).forEach(deepFreeze);
    Object.freeze(v);
  }
  return v;
};
const apply = (action: unknown, current: JsonObject, domain: Record<string, DomainAction> = {}) =>
  applyAction(parseAction(action), deepFreeze(current), ctx, domain);
const updated = (action: unknown, current: JsonObject) => {
  const outcome = apply(action, current);
  if (outcome.kind !== 'update') throw new Error(`expected an update, got ${outcome.kind}`);
  return outcome.value;
};

describe('applyAction', () => {
  describe('set', () => {
    it('writes fields and creates missing intermediate objects', () => {
      expect(updated({ set: { status: 'dormant', 'meta.reason.code': 7 } }, { status: 'active', n: 1 })).toEqual({
        status: 'dormant',
        n: 1,
        meta: { reason: { code: 7 } },
      });
    });
    it('merges into existing objects without dropping siblings', () => {
      expect(updated({ set: { 'a.b': 2, 'a.d': 4 } }, { a: { b: 1, c: 3 } })).toEqual({ a: { b: 2, c: 3, d: 4 } });
    });
    it('replaces a whole subtree with a copy of the given value', () => {
      const action = parseAction({ set: { a: { list: [1, { x: 2 }] } } }) as { set: JsonObject };
      const outcome = applyAction(action, { a: 'old' }, ctx);
      const value = (outcome as { value: JsonObject }).value;
      expect(value).toEqual({ a: { list: [1, { x: 2 }] } });
      expect(value.a).not.toBe(action.set.a);
    });
    it('refuses to write through a value that is not an object', () => {
      for (const a of [1, 'x', [1], null, true]) {
        expect(() => apply({ set: { 'a.b': 1 } }, { a })).toThrow(RuleApplyError);
      }
      expect(() => apply({ set: { 'a.b.c': 1 } }, { a: { b: 5 } })).toThrow(
        'cannot set "a.b.c": "a.b" holds number, not an object',
      );
    });
  });

  describe('unset', () => {
    it('removes fields, including nested ones', () => {
      expect(updated({ unset: ['a', 'b.c'] }, { a: 1, b: { c: 2, d: 3 }, e: 4 })).toEqual({ b: { d: 3 }, e: 4 });
    });
    it('is a no-op for a missing field or a path through a non-object', () => {
      expect(updated({ unset: ['x', 'a.b', 'c.d.e'] }, { a: 5, c: { d: [1] } })).toEqual({ a: 5, c: { d: [1] } });
    });
    it('removes a field holding null', () => {
      expect(updated({ unset: ['a'] }, { a: null })).toEqual({});
    });
  });

  describe('increment', () => {
    it('adds to numbers and starts a missing field from 0', () => {
      expect(updated({ increment: { n: 2, 'stats.count': -1, f: 0.5 } }, { n: 40, f: 1 })).toEqual({
        n: 42,
        f: 1.5,
        stats: { count: -1 },
      });
    });
    it.each([['7'], [null], [true], [[1]], [{}]])('throws RuleApplyError on a non-number %j', (n) => {
      let error: unknown;
      try {
        apply({ increment: { n: 1 } }, { n } as JsonObject);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(RuleApplyError);
      expect(error).toMatchObject({ code: 'RULE_APPLY_FAILED', retriable: false, field: 'n' });
    });
    it('throws RuleApplyError when the result overflows', () => {
      expect(() => apply({ increment: { n: 1e308 } }, { n: 1e308 })).toThrow('the result is not a finite number');
    });
  });

  it('applies set, then unset, then increment in one action', () => {
    expect(updated({ set: { a: 1 }, unset: ['b'], increment: { c: 2 } }, { b: 1, c: 1 })).toEqual({ a: 1, c: 3 });
  });

  it('delete yields a delete outcome', () => {
    expect(apply({ delete: true }, { a: 1 })).toEqual({ kind: 'delete' });
  });

  describe('purity', () => {
    it('never mutates the current value and shares only untouched subtrees', () => {
      const current: JsonObject = { a: { b: 1, keep: { deep: [1] } }, other: { x: 1 }, n: 1, gone: true };
      const snapshot = structuredClone(current);
      const outcome = applyAction(
        parseAction({ set: { 'a.b': 2, 'a.c.d': 3 }, unset: ['gone'], increment: { n: 1 } }),
        current,
        ctx,
      );
      expect(current).toEqual(snapshot);
      const value = (outcome as { value: JsonObject }).value;
      expect(value).toEqual({ a: { b: 2, c: { d: 3 }, keep: { deep: [1] } }, other: { x: 1 }, n: 2 });
      expect(value).not.toBe(current);
      expect(value.a).not.toBe(current.a);
      expect(value.other).toBe(current.other);
    });
    it('returns a new object even when nothing changes', () => {
      const current = { a: 1 };
      const outcome = applyAction({ unset: ['missing'] }, current, ctx);
      expect(outcome).toEqual({ kind: 'update', value: { a: 1 } });
      expect((outcome as { value: JsonObject }).value).not.toBe(current);
    });
    it('works on frozen input', () => {
      expect(() =>
        apply({ set: { 'a.b': 1 }, unset: ['c.d'], increment: { e: 1 } }, { a: {}, c: { d: 1 }, e: 1 }),
      ).not.toThrow();
    });
  });

  describe('domain actions', () => {
    const archive: DomainAction = (current, params, { asOf }) => ({
      kind: 'update',
      value: { ...current, status: 'archived', archivedAt: asOf, reason: params.reason ?? null },
    });

    it('calls the named action with the current value, params and context', () => {
      expect(apply({ domain: 'archive', params: { reason: 'idle' } }, { status: 'active' }, { archive })).toEqual({
        kind: 'update',
        value: { status: 'archived', archivedAt: ctx.asOf, reason: 'idle' },
      });
      expect(apply({ domain: 'archive' }, {}, { archive })).toMatchObject({ value: { reason: null } });
    });

    it('hands the action copies, so a misbehaving one cannot mutate the caller', () => {
      const current: JsonObject = { list: [1] };
      const params: JsonObject = { p: [1] };
      const mutating: DomainAction = (c, p) => {
        (c.list as number[]).push(2);
        (p.p as number[]).push(2);
        return { kind: 'delete' };
      };
      applyAction({ domain: 'mutating', params }, current, ctx, { mutating });
      expect(current).toEqual({ list: [1] });
      expect(params).toEqual({ p: [1] });
    });

    it('throws RuleApplyError for an unknown name, including inherited names', () => {
      expect(() => apply({ domain: 'archive' }, {})).toThrow(new RuleApplyError('unknown domain action "archive"'));
      expect(() => apply({ domain: 'toString' }, {})).toThrow(RuleApplyError);
    });

    it('reports any failure of the action as a RuleApplyError, keeping the cause', () => {
      const boom = new Error('no such plan');
      const failing: DomainAction = () => {
        throw boom;
      };
      expect(() => apply({ domain: 'failing' }, {}, { failing })).toThrow(
        expect.objectContaining({ code: 'RULE_APPLY_FAILED', cause: boom }),
      );
      const rejecting: DomainAction = () => {
        throw new RuleValidationError([{ path: '/action/params/plan', message: 'unknown plan' }]);
      };
      expect(() => apply({ domain: 'rejecting' }, {}, { rejecting })).toThrow(RuleApplyError);
      const refusing: DomainAction = () => {
        throw new RuleApplyError('account is closed');
      };
      expect(() => apply({ domain: 'refusing' }, {}, { refusing })).toThrow(new RuleApplyError('account is closed'));
    });

    it('rejects an outcome that is neither an update nor a delete', () => {
      const broken = (() => ({ kind: 'update', value: 3 })) as unknown as DomainAction;
      expect(() => apply({ domain: 'broken' }, {}, { broken })).toThrow('returned neither an update nor a delete');
    });
  });
});
