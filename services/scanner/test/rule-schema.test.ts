import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { ActionSchema, ConditionSchema, validateAction, validateCondition } from '@state-relay/rules';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/http/app';
import { createLogger } from '../src/logger';
import { createScannerMetrics } from '../src/metrics';
import type { ScanService } from '../src/scans/scan-service';
import type { ScheduleService } from '../src/schedules/schedule-service';

const never = () => {
  throw new Error('not called');
};

/** Every ```json block of a README, parsed (the blocks that are not one JSON value are skipped). */
function jsonExamples(file: string): unknown[] {
  const text = readFileSync(join(__dirname, file), 'utf8');
  const blocks = [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.flatMap((b) => {
    try {
      return [JSON.parse(b) as unknown];
    } catch {
      return [];
    }
  });
}

// Conditions: valid ones, then ones the validator refuses.
const CONDITIONS: Array<[string, unknown]> = [
  ['a comparison', { field: 'status', op: 'eq', value: 'active' }],
  ['ne of an object', { field: 'limits', op: 'ne', value: { daily: 5, extra: { $note: 1 } } }],
  ['a relative time', { field: 'lastActivityAt', op: 'lt', value: { $ago: 'P30D' } }],
  ['gte of a number', { field: 'a.b.c', op: 'gte', value: 2.5 }],
  ['in', { field: 'tier', op: 'in', value: ['gold', 1, null, true] }],
  ['exists without a value', { field: 'closedAt', op: 'exists' }],
  ['exists false', { field: 'closedAt', op: 'exists', value: false }],
  ['prefix', { field: 'id', op: 'prefix', value: 'acc-' }],
  ['all, any, not', { all: [{ any: [{ field: 'a', op: 'eq', value: 1 }] }, { not: { field: 'b', op: 'exists' } }] }],
  ['an unknown operator', { field: 'a', op: 'like', value: 'x' }],
  ['no op', { field: 'a', value: 1 }],
  ['no value for eq', { field: 'a', op: 'eq' }],
  ['an empty all', { all: [] }],
  ['all and field at once', { all: [{ field: 'a', op: 'exists' }], field: 'a' }],
  ['an unknown key on a leaf', { field: 'a', op: 'eq', value: 1, extra: true }],
  ['a reserved path segment', { field: 'a.__proto__', op: 'eq', value: 1 }],
  ['a bad path segment', { field: 'a-b', op: 'eq', value: 1 }],
  ['too many path segments', { field: 'a.b.c.d.e.f.g.h.i', op: 'eq', value: 1 }],
  ['lt of a boolean', { field: 'a', op: 'lt', value: true }],
  ['in of an object', { field: 'a', op: 'in', value: [{ x: 1 }] }],
  ['an empty in', { field: 'a', op: 'in', value: [] }],
  ['exists of a string', { field: 'a', op: 'exists', value: 'yes' }],
  ['prefix of a number', { field: 'a', op: 'prefix', value: 1 }],
  ['a reserved operand', { field: 'a', op: 'eq', value: { $now: true } }],
  ['$ago with a month', { field: 'a', op: 'lt', value: { $ago: 'P1M' } }],
  ['$ago of nothing', { field: 'a', op: 'lt', value: { $ago: 'PT' } }],
  ['$ago with a neighbour', { field: 'a', op: 'lt', value: { $ago: 'P1D', x: 1 } }],
  ['not of an array', { not: [{ field: 'a', op: 'exists' }] }],
  ['a string', 'status = active'],
  ['null', null],
];

const ACTIONS: Array<[string, unknown]> = [
  ['set', { set: { status: 'dormant', 'limits.daily': 0, tags: ['a'], meta: { x: null } } }],
  ['set, unset and increment', { set: { a: 1 }, unset: ['b'], increment: { 'c.n': -1.5 } }],
  ['unset only', { unset: ['a', 'b.c'] }],
  ['an empty set beside an unset', { set: {}, unset: ['a'] }],
  ['delete', { delete: true }],
  ['a domain action', { domain: 'mark_dormant' }],
  ['a domain action with params', { domain: 'close', params: { reason: 'x', at: [1, { y: true }] } }],
  ['nothing', {}],
  ['an unknown key', { rename: { a: 'b' } }],
  ['delete false', { delete: false }],
  ['delete with a set', { delete: true, set: { a: 1 } }],
  ['a domain action without a name', { domain: '' }],
  ['a domain action with an extra key', { domain: 'close', set: { a: 1 } }],
  ['params not an object', { domain: 'close', params: [1] }],
  ['increment by a string', { increment: { a: '1' } }],
  ['set of a bad path', { set: { 'a..b': 1 } }],
  ['unset not an array', { unset: 'a' }],
  ['set of __proto__', JSON.parse('{"set": {"__proto__": 1}}') as unknown],
  ['an array', [{ set: { a: 1 } }]],
];

describe('the rule language as a TypeBox schema agrees with the rules’ validators', () => {
  it.each(CONDITIONS)('condition: %s', (_what, condition) => {
    expect(Value.Check(ConditionSchema, condition)).toBe(validateCondition(condition).length === 0);
  });

  it.each(ACTIONS)('action: %s', (_what, action) => {
    expect(Value.Check(ActionSchema, action)).toBe(validateAction(action).length === 0);
  });

  it('accepts every condition and action the READMEs show', () => {
    const examples = [
      ...jsonExamples('../README.md'),
      ...jsonExamples('../../../packages/rules/README.md'),
      DORMANCY_SWEEP,
    ];
    let rules = 0;
    for (const example of examples) {
      const e = example as {
        condition?: unknown;
        action?: unknown;
        template?: { condition?: unknown; action?: unknown };
      };
      for (const holder of [e, e.template]) {
        if (holder?.condition !== undefined && validateCondition(holder.condition).length === 0) {
          expect(Value.Check(ConditionSchema, holder.condition)).toBe(true);
          rules++;
        }
        if (holder?.action !== undefined && validateAction(holder.action).length === 0) {
          expect(Value.Check(ActionSchema, holder.action)).toBe(true);
          rules++;
        }
      }
    }
    expect(rules).toBeGreaterThan(3);
  });

  it('is looser only where the validators check more than a shape (sizes, overlaps, empty changes)', () => {
    const deep = JSON.parse(`${'{"not":'.repeat(40)}{"field":"a","op":"exists"}${'}'.repeat(40)}`) as unknown;
    const cases = [deep, { field: 'a', op: 'eq', value: 1 }];
    expect(Value.Check(ConditionSchema, cases[0])).toBe(true);
    expect(validateCondition(cases[0])).not.toEqual([]);
    for (const action of [{ set: {} }, { set: { a: 1 }, unset: ['a'] }]) {
      expect(Value.Check(ActionSchema, action)).toBe(true);
      expect(validateAction(action)).not.toEqual([]);
    }
  });
});

describe('GET /openapi.json documents conditions and actions', () => {
  let app: FastifyInstance;
  let doc: {
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
    components: { schemas: Record<string, unknown> };
  };

  beforeAll(async () => {
    app = buildApp({
      scans: { create: never, list: never, get: never, cancel: never } as unknown as ScanService,
      replica: { ready: true, lag: () => [] },
      metrics: createScannerMetrics(),
      logger: createLogger('silent'),
      apiToken: 'test-token-0123456789abcdef',
      maxBodyBytes: 65_536,
      schedules: { create: never } as unknown as ScheduleService,
    });
    // Over a socket, as a client reads it (light-my-request's inject needs ESM jest does not load).
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    doc = (await (await fetch(`${base}/openapi.json`)).json()) as typeof doc;
  });
  afterAll(() => app.close());

  const text = () => JSON.stringify(doc);
  const body = (path: string, method: string) =>
    JSON.stringify(doc.paths[path]![method]!.requestBody!.content['application/json']!.schema);

  it('has the Condition and Action schemas as components', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Condition', 'Action']));
    const condition = JSON.stringify(doc.components.schemas.Condition);
    for (const combinator of ['all', 'any', 'not']) expect(condition).toContain(`"${combinator}"`);
    for (const op of ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'exists', 'prefix'])
      expect(condition).toContain(`"enum":["${op}"]`); // the document writes a const as a one-value enum
    expect(condition).toContain('"$ago"');
    const action = JSON.stringify(doc.components.schemas.Action);
    for (const form of ['set', 'unset', 'increment', 'delete', 'domain', 'params'])
      expect(action).toContain(`"${form}"`);
  });

  it('refers to them from the scan and schedule bodies and views', () => {
    for (const schema of [body('/scans', 'post'), body('/schedules', 'post')]) {
      expect(schema).toContain('#/components/schemas/Condition');
      expect(schema).toContain('#/components/schemas/Action');
    }
    expect(text()).not.toContain('"additionalProperties":true,"description":"A condition');
    expect(JSON.stringify(doc.paths['/scans/{id}'])).toContain('#/components/schemas/Condition');
  });
});
