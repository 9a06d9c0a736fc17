import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { accountsDomain, DORMANCY_SWEEP } from '@state-relay/accounts';
import {
  commandIdFor,
  DEAD_LETTER_HEADERS,
  decodeCommandResult,
  encodeCommand,
  type StoredEntity,
  type UpdateCommand,
} from '@state-relay/contracts';
import { validateAction, validateCondition } from '@state-relay/rules';
import { kafkaClient, readTopic, testBrokers } from '@state-relay/testkit';
import type { FastifyInstance } from 'fastify';
import type { Kafka } from 'kafkajs';
import { aggregate } from '../../services/processor/src/aggregate';
import { buildApp as buildProcessorApp } from '../../services/processor/src/http/app';
import { createProcessorMetrics } from '../../services/processor/src/metrics';
import { newDeployment, ProcessorProcess, produceEvents, waitCaughtUp } from '../../services/processor/test/harness';
import { buildApp } from '../../services/scanner/src/http/app';
import { loadConfig } from '../../services/scanner/src/config';
import { ERRORS } from '../../services/scanner/src/errors';
import { createLogger } from '../../services/scanner/src/logger';
import { createScannerMetrics } from '../../services/scanner/src/metrics';
import { Scanner } from '../../services/scanner/src/scanner';
import pino from 'pino';

// Security properties of both HTTP surfaces and of the command path:
// - no route changes state without the token (the processor has no state-changing route at all);
// - the token never appears in a log line or a response body;
// - bodies over the limit get 413;
// - no condition or action reaches outside the record: "__proto__" / "constructor" / "prototype"
//   as path segments or keys get a 400 from the scanner and `invalid` (or a dead letter) from the
//   processor, and Object.prototype is never touched;
// - property-based: whatever JSON (or not-JSON) arrives, the scanner answers a 4xx naming what is
//   wrong, or a 202 for a scan the processor will also judge valid — never a 5xx.
// The scanner runs fully wired (the real Scanner, SQLite stores on disk) without Kafka: the API
// and the scan queue need no broker. Requests are real HTTP on an ephemeral port.

const TOKEN = 'security-suite-token-9f3b7c1d2e4a6b80';
const MAX_BODY = 8_192;
const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);
const KNOWN_ACTIONS = Object.keys(accountsDomain.domainActions);
const NASTY = ['__proto__', 'constructor', 'prototype'];

function prototypeIsClean(): boolean {
  const probe = {} as Record<string, unknown>;
  return (
    Object.getPrototypeOf(probe) === Object.prototype &&
    ['polluted', 'x', 'admin', 'isAdmin', 'status'].every((k) => probe[k] === undefined) &&
    Object.keys(Object.prototype).length === 0
  );
}

interface Res {
  status: number;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function request(
  base: string,
  method: string,
  path: string,
  opts: { token?: string | null; body?: string | Buffer; type?: string } = {},
): Promise<Res> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? TOKEN : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (opts.body !== undefined) headers['content-type'] = opts.type ?? 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: opts.body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

describe('scanner API security (real service wiring, no broker)', () => {
  let dir: string;
  let scanner: Scanner;
  let app: FastifyInstance;
  let base: string;
  const logs: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scanner-security-'));
    const config = loadConfig({
      KAFKA_BROKERS: '127.0.0.1:1', // never connected: start() is not called
      API_TOKEN: TOKEN,
      STATE_DIR: dir,
      MAX_BODY_BYTES: String(MAX_BODY),
      // The properties create hundreds of scans that never run (no broker): the cap is not what they test.
      MAX_ACTIVE_SCANS: '100000',
      LOG_LEVEL: 'trace',
    });
    const logger = createLogger('trace', { write: (line: string) => void logs.push(line) });
    const metrics = createScannerMetrics();
    scanner = new Scanner({ config, logger, metrics });
    app = buildApp({
      scans: scanner.service,
      replica: scanner.replicaHealth,
      metrics,
      logger,
      apiToken: config.apiToken,
      maxBodyBytes: config.maxBodyBytes,
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await scanner?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    expect(prototypeIsClean()).toBe(true);
  });

  const scanCount = async () => (await request(base, 'GET', '/scans?limit=1')).json.total as number;

  /** The shape every non-2xx answer has: a known error code and a message; a 400 names the field. */
  function expectPrecise4xx(res: Res, context: string): void {
    expect({ context, status: res.status, fiveHundred: res.status >= 500 }).toEqual({
      context,
      status: res.status,
      fiveHundred: false,
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(Object.keys(ERRORS)).toContain(res.json?.error);
    expect(ERRORS[res.json.error as keyof typeof ERRORS].status).toBe(res.status);
    expect(typeof res.json.message).toBe('string');
    expect(res.json.message.length).toBeGreaterThan(0);
    if (res.json.error === 'invalid_request') {
      expect(res.json.issues.length).toBeGreaterThan(0);
      for (const issue of res.json.issues as Array<{ path: string; message: string }>) {
        expect(issue.path).toMatch(/^\/(body|querystring|params)(\/|$)/);
        expect(issue.message.length).toBeGreaterThan(0);
      }
      expect(res.json.message).toContain(res.json.issues[0].path);
    }
    expect(res.text).not.toContain(TOKEN);
  }

  describe('the token', () => {
    const routes: Array<[string, string]> = [
      ['POST', '/scans'],
      ['GET', '/scans'],
      ['GET', '/scans/some-id'],
      ['POST', '/scans/some-id/cancel'],
      ['DELETE', '/scans/some-id'],
      ['PUT', '/scans/some-id'],
      ['PATCH', '/scans'],
    ];

    it('no route changes state without it: every method on every route, no token or a wrong one', async () => {
      const created = await request(base, 'POST', '/scans', { body: JSON.stringify(DORMANCY_SWEEP) });
      expect(created.status).toBe(202);
      const id = created.json.scan.id as string;
      const before = await scanCount();
      const wrongTokens = [null, '', 'x', TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.toUpperCase(), `Basic ${TOKEN}`];
      for (const [method, path] of [...routes, ['POST', `/scans/${id}/cancel`] as [string, string]]) {
        for (const token of wrongTokens) {
          const body = method === 'GET' ? undefined : JSON.stringify(DORMANCY_SWEEP);
          const res = await request(base, method, path, { token, body });
          expect([method, path, res.status]).toEqual([method, path, res.status === 404 ? 404 : 401]);
          expect(res.text).not.toContain(TOKEN.slice(0, 12));
        }
      }
      // Open routes are read-only: a write verb on them finds no route.
      for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json']) {
        for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
          expect([method, path, (await request(base, method, path, { token: null, body: '{}' })).status]).toEqual([
            method,
            path,
            404,
          ]);
        }
      }
      expect(await scanCount()).toBe(before);
      expect((await request(base, 'GET', `/scans/${id}`)).json.status).toBe('pending'); // not cancelled
    });

    it('never appears in a log line or a response body, whatever the request', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('POST /scans', 'GET /scans', 'GET /scans/x', 'POST /scans/x/cancel', 'GET /nope'),
          fc.constantFrom(TOKEN, `${TOKEN}0`, TOKEN.slice(1), null),
          fc.oneof(fc.json(), fc.constant(JSON.stringify(DORMANCY_SWEEP)), fc.constant(`{"token":"${TOKEN}"`)),
          async (route, token, body) => {
            const [method, path] = route.split(' ') as [string, string];
            const res = await request(base, method, path, { token, body: method === 'POST' ? body : undefined });
            // A body may echo what the client sent (a field name), but never the configured token
            // in answer to a request that did not carry it in its body.
            if (!body.includes(TOKEN)) expect(res.text).not.toContain(TOKEN);
          },
        ),
        { numRuns: RUNS },
      );
      app.log.info(
        { headers: { authorization: `Bearer ${TOKEN}` }, token: TOKEN, apiToken: TOKEN },
        'a careless log line',
      );
      expect(logs.length).toBeGreaterThan(0);
      const leaked = logs.filter((l) => l.includes(TOKEN) || l.includes(TOKEN.slice(1)));
      expect(leaked).toEqual([]);
    });
  });

  describe('body limits', () => {
    it.each([
      ['just over the limit', MAX_BODY + 1],
      ['ten times the limit', MAX_BODY * 10],
      ['a megabyte', 1024 * 1024],
    ])('%s: 413 before anything is parsed or stored', async (_what, size) => {
      const before = await scanCount();
      const padding = 'x'.repeat(size);
      const res = await request(base, 'POST', '/scans', { body: JSON.stringify({ ...DORMANCY_SWEEP, padding }) });
      expect(res.status).toBe(413);
      expect(res.json).toEqual({ error: 'body_too_large', message: `the body is larger than ${MAX_BODY} bytes` });
      // Without the token, the body is never read at all: 401 even when it is huge.
      expect((await request(base, 'POST', '/scans', { token: null, body: padding })).status).toBe(401);
      expect(await scanCount()).toBe(before);
    });
  });

  describe('conditions and actions cannot reach outside the record', () => {
    const cases: Array<[string, unknown]> = [];
    for (const n of NASTY) {
      cases.push([`condition field "${n}"`, { ...DORMANCY_SWEEP, condition: { field: n, op: 'exists' } }]);
      cases.push([
        `condition field "${n}.polluted"`,
        { ...DORMANCY_SWEEP, condition: { field: `${n}.polluted`, op: 'eq', value: 1 } },
      ]);
      cases.push([
        `nested condition field "a.${n}"`,
        { ...DORMANCY_SWEEP, condition: { all: [{ not: { field: `a.${n}`, op: 'exists' } }] } },
      ]);
      cases.push([`set "${n}.polluted"`, { ...DORMANCY_SWEEP, action: { set: { [`${n}.polluted`]: true } } }]);
      cases.push([`set "a.${n}.x"`, { ...DORMANCY_SWEEP, action: { set: { [`a.${n}.x`]: true } } }]);
      cases.push([`unset "${n}"`, { ...DORMANCY_SWEEP, action: { unset: [n] } }]);
      cases.push([`increment "${n}.x"`, { ...DORMANCY_SWEEP, action: { increment: { [`${n}.x`]: 1 } } }]);
    }
    it.each(cases)('%s: 400 naming the field, nothing stored', async (_what, body) => {
      const before = await scanCount();
      const res = await request(base, 'POST', '/scans', { body: JSON.stringify(body) });
      expect(res.status).toBe(400);
      expectPrecise4xx(res, _what);
      expect(res.json.issues.some((i: { message: string }) => /reserved|not allowed/.test(i.message))).toBe(true);
      expect(await scanCount()).toBe(before);
    });

    it.each([
      [
        'top level',
        '{"__proto__":{"polluted":true},"condition":{"field":"status","op":"exists"},"action":{"domain":"mark_dormant"}}',
      ],
      [
        'in a set value',
        '{"condition":{"field":"status","op":"exists"},"action":{"set":{"a":{"__proto__":{"polluted":true}}}}}',
      ],
      [
        'in domain params',
        '{"condition":{"field":"status","op":"exists"},"action":{"domain":"close","params":{"__proto__":{"polluted":true}}}}',
      ],
      [
        'in an eq operand',
        '{"condition":{"field":"a","op":"eq","value":{"__proto__":{"polluted":true}}},"action":{"domain":"close"}}',
      ],
      [
        'in options',
        '{"condition":{"field":"status","op":"exists"},"action":{"domain":"close"},"options":{"__proto__":{"rate":1}}}',
      ],
    ])('a "__proto__" key %s: 400, Object.prototype untouched', async (_where, text) => {
      const before = await scanCount();
      const res = await request(base, 'POST', '/scans', { body: text });
      expectPrecise4xx(res, _where);
      expect(res.status).toBe(400);
      expect(await scanCount()).toBe(before);
    });
  });

  describe('property-based: never a 5xx', () => {
    const oddKey = fc.oneof(
      fc.constantFrom(
        ...NASTY,
        'toString',
        'hasOwnProperty',
        '',
        ' ',
        '\u0000',
        '\ud800',
        '\u202e',
        'ключ',
        '🔑',
        'a/b',
        'a~b',
        '$ago',
        'condition',
      ),
      fc.string({ unit: 'binary', maxLength: 10 }),
    );
    const anyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -0, '', 'x', Number.MAX_SAFE_INTEGER + 2),
        fc.string({ unit: 'binary', maxLength: 30 }),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.dictionary(oddKey, tie('v'), { maxKeys: 4 }),
      ),
    })).v;
    /** JSON text by hand, so "__proto__" keys really appear in it. */
    const text = (v: unknown): string =>
      Array.isArray(v)
        ? `[${v.map(text).join(',')}]`
        : typeof v === 'object' && v !== null
          ? `{${Object.entries(v)
              .map(([k, x]) => `${JSON.stringify(k)}:${text(x)}`)
              .join(',')}}`
          : (JSON.stringify(v) ?? 'null');

    /** A valid body with one part replaced by junk, or joined by an odd key. */
    const nearValid = fc.oneof(
      fc
        .tuple(fc.constantFrom('condition', 'action', 'options', 'asOf'), anyJson)
        .map(([k, junk]) => text({ ...DORMANCY_SWEEP, [k]: junk })),
      fc
        .tuple(fc.constantFrom('rate', 'batchSize', 'dryRun', 'maxCommands', 'expectVersion'), anyJson)
        .map(([k, junk]) => text({ ...DORMANCY_SWEEP, options: { [k]: junk } })),
      fc
        .tuple(oddKey, anyJson)
        .map(([k, junk]) => `${JSON.stringify(DORMANCY_SWEEP).slice(0, -1)},${JSON.stringify(k)}:${text(junk)}}`),
      fc
        .tuple(oddKey, anyJson)
        .map(([k, junk]) => text({ ...DORMANCY_SWEEP, condition: { field: k, op: 'eq', value: junk } })),
      fc.tuple(oddKey, anyJson).map(([k, junk]) => text({ ...DORMANCY_SWEEP, action: { set: { [k]: junk } } })),
      fc.tuple(oddKey, anyJson).map(([k, junk]) => text({ ...DORMANCY_SWEEP, condition: { all: [{ [k]: junk }] } })),
    );
    const bodies: fc.Arbitrary<{ body: string | Buffer; type?: string }> = fc.oneof(
      fc.json().map((s) => ({ body: s })),
      anyJson.map((v) => ({ body: text(v) })),
      nearValid.map((s) => ({ body: s })),
      fc.uint8Array({ maxLength: 300 }).map((b) => ({ body: Buffer.from(b) })),
      fc.string({ maxLength: 50 }).map((s) => ({ body: s, type: 'text/plain' })),
      fc
        .constantFrom(
          'application/x-www-form-urlencoded',
          'application/json; charset=latin1',
          'multipart/form-data',
          'application/jsonx',
        )
        .map((type) => ({
          body: JSON.stringify(DORMANCY_SWEEP),
          type,
        })),
      fc.nat({ max: 60 }).map((depth) => ({ body: text({ ...DORMANCY_SWEEP, condition: nestedNot(depth) }) })),
      fc
        .integer({ min: MAX_BODY - 200, max: MAX_BODY + 200 })
        .map((n) => ({ body: text({ ...DORMANCY_SWEEP, asOf: 'x'.repeat(n) }) })),
    );

    it('POST /scans: a 4xx that names what is wrong, or a 202 for a scan the processor would judge valid', async () => {
      await fc.assert(
        fc.asyncProperty(bodies, async ({ body, type }) => {
          const res = await request(base, 'POST', '/scans', { body, type });
          if (res.status === 202) {
            const sent = JSON.parse(body.toString()) as { condition: unknown; action: unknown };
            expect(validateCondition(sent.condition)).toEqual([]);
            expect(validateAction(sent.action, '/action', KNOWN_ACTIONS)).toEqual([]);
            expect(res.json.scan.status).toBe('pending');
          } else {
            expectPrecise4xx(res, body.toString().slice(0, 200));
            expect([400, 413, 415]).toContain(res.status);
          }
          expect(prototypeIsClean()).toBe(true);
        }),
        { numRuns: RUNS * 2 },
      );
    });

    it('POST /scans with any valid condition and action: 202, and it reads back as sent', async () => {
      await fc.assert(
        fc.asyncProperty(validCondition, validAction, validOptions, async (condition, action, options) => {
          const res = await request(base, 'POST', '/scans', {
            body: JSON.stringify({ condition, action, options, asOf: 1_700_000_000_000 }),
          });
          expect({ status: res.status, body: res.status === 202 ? undefined : res.json }).toEqual({
            status: 202,
            body: undefined,
          });
          const back = await request(base, 'GET', `/scans/${res.json.scan.id}`);
          expect(back.json).toMatchObject({ condition, action, options });
        }),
        { numRuns: RUNS },
      );
    });

    it('GET /scans/:id and GET /scans?query: 200, 400 or 404, never a 5xx', async () => {
      await fc.assert(
        fc.asyncProperty(
          // Ids up to the schema's 100 characters; longer ones are the router's (see the next test).
          fc.oneof(
            fc.string({ unit: 'grapheme', maxLength: 100 }).filter((s) => s.length <= 100),
            fc.constantFrom(...NASTY, '..', '%00', '%ff', 'a'.repeat(100)),
          ),
          fc.dictionary(
            fc.constantFrom('limit', 'offset', 'x', '__proto__'),
            fc.oneof(fc.string({ maxLength: 8 }), fc.nat().map(String), fc.constant('1e3')),
          ),
          async (id, query) => {
            const one = await request(base, 'GET', `/scans/${encodeURIComponent(id)}`);
            if (one.status !== 200) {
              expectPrecise4xx(one, `id ${JSON.stringify(id)}`);
              expect([400, 404]).toContain(one.status);
            }
            const qs = new URLSearchParams(query).toString();
            const list = await request(base, 'GET', `/scans?${qs}`);
            if (list.status !== 200) expectPrecise4xx(list, qs);
          },
        ),
        { numRuns: RUNS },
      );
    });
  });

  describe('errors raised by the router, before any route runs', () => {
    it.each([
      ['a malformed %-escape in the path', '/scans/%ff'],
      ['a lone % in the path', '/scans/%'],
      ['a truncated UTF-8 escape', '/scans/%E0%A4%A'],
      ["a path parameter over the router's length limit", `/scans/${'a'.repeat(101)}`],
    ])("%s: a 4xx in the API's own error shape (a code from its error map)", async (_what, path) => {
      const res = await request(base, 'GET', path);
      expectPrecise4xx(res, path);
    });
  });
});

function nestedNot(depth: number): unknown {
  let c: unknown = { field: 'status', op: 'eq', value: 'active' };
  for (let i = 0; i < depth; i++) c = { not: c };
  return c;
}

// Valid rule-language values, generated from the grammar: every one must be accepted.
const fieldPath = fc
  .array(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/), { minLength: 1, maxLength: 3 })
  .filter((segs) => segs.every((s) => !NASTY.includes(s)))
  .map((segs) => segs.join('.'));
const primitive = fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null));
const leaf = fc.oneof(
  fc.record({
    field: fieldPath,
    op: fc.constantFrom('eq', 'ne'),
    value: fc.oneof(primitive, fc.constant({ $ago: 'P30D' })),
  }),
  fc.record({
    field: fieldPath,
    op: fc.constantFrom('lt', 'lte', 'gt', 'gte'),
    value: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant({ $ago: 'PT12H' })),
  }),
  fc.record({ field: fieldPath, op: fc.constant('in'), value: fc.array(primitive, { minLength: 1, maxLength: 4 }) }),
  fc.record({ field: fieldPath, op: fc.constant('exists'), value: fc.boolean() }),
  fc.record({ field: fieldPath, op: fc.constant('prefix'), value: fc.string({ maxLength: 8 }) }),
);
const validCondition: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  c: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ all: fc.array(tie('c'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ any: fc.array(tie('c'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ not: tie('c') }),
  ),
})).c;
const validAction = fc.oneof(
  fc.constant({ delete: true }),
  fc.constantFrom(...Object.keys(accountsDomain.domainActions)).map((domain) => ({ domain, params: {} })),
  // set / unset / increment on distinct top-level fields, so none overlaps another
  fc
    .uniqueArray(
      fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}$/).filter((s) => !NASTY.includes(s)),
      { minLength: 3, maxLength: 3 },
    )
    .chain(([a, b, c]) =>
      fc.record({
        set: fc.constant({ [a!]: 'x' }),
        unset: fc.constant([b!]),
        increment: fc.integer({ min: -1000, max: 1000 }).map((n) => ({ [c!]: n })),
      }),
    ),
);
const validOptions = fc.record(
  {
    rate: fc.integer({ min: 0, max: 1000 }),
    batchSize: fc.integer({ min: 1, max: 5000 }),
    dryRun: fc.boolean(),
    expectVersion: fc.boolean(),
  },
  { requiredKeys: [] },
);

describe('processor: no state change over HTTP, no escape from the record through a command', () => {
  it('has no route that accepts a write: every write verb on every route is a 404', async () => {
    const entity: StoredEntity = { version: 3, value: { status: 'active' }, seen: '' };
    const app = buildProcessorApp({
      processor: {
        isReady: true,
        tasks: {
          owned: [0],
          read: async (key: string) => (key === 'acct-1' ? { task: 0, entity } : undefined),
        } as never,
      },
      metrics: createProcessorMetrics(),
      logger: pino({ level: 'silent' }),
      stateAuth: { kind: 'bearer', token: TOKEN },
    });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      for (const path of ['/state/acct-1', '/state', '/healthz', '/readyz', '/metrics', '/']) {
        for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
          const res = await request(base, method, path, { token: null, body: '{"status":"closed"}' });
          expect([method, path, res.status]).toEqual([method, path, 404]);
        }
      }
      // A body over the processor's 1 KiB limit is refused without reaching any handler.
      const big = await request(base, 'POST', '/state/acct-1', {
        token: null,
        body: JSON.stringify({ x: 'x'.repeat(10_000) }),
      });
      expect(big.status).toBeGreaterThanOrEqual(400);
      expect(big.status).toBeLessThan(500);
      for (const key of NASTY) expect((await request(base, 'GET', `/state/${key}`)).status).toBe(404);
      expect(entity).toEqual({ version: 3, value: { status: 'active' }, seen: '' });
    } finally {
      await app.close();
    }
  });

  it('the aggregate answers `invalid` for reserved path segments anywhere, and never touches Object.prototype', () => {
    const current: StoredEntity = { version: 1, value: { status: 'active', a: {} }, seen: '' };
    const segment = fc.constantFrom(...NASTY);
    const prefix = fc.constantFrom('', 'a.', 'status.', 'a.b.');
    const cmd = (condition: unknown, action: unknown, n: number): UpdateCommand => ({
      commandId: `c-${n}`,
      scanId: 's',
      key: 'k',
      asOf: 0,
      condition: condition as never,
      action: action as never,
      issuedAt: 0,
    });
    let n = 0;
    fc.assert(
      fc.property(segment, prefix, fc.constantFrom('condition', 'set', 'unset', 'increment'), (seg, pre, where) => {
        const path = `${pre}${seg}.polluted`;
        const ok = { field: 'status', op: 'exists' };
        const [condition, action] =
          where === 'condition'
            ? [{ all: [ok, { field: path, op: 'exists' }] }, { set: { x: 1 } }]
            : [ok, where === 'unset' ? { unset: [path] } : { [where]: { [path]: 1 } }];
        const { next, verdict } = aggregate(
          accountsDomain,
          'k',
          { kind: 'command', command: cmd(condition, action, n++) },
          current,
        );
        expect(verdict?.outcome).toBe('invalid');
        expect(verdict?.reason).toMatch(/reserved/);
        expect(next).toBeUndefined();
        expect(prototypeIsClean()).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('a real processor answers `invalid` (or dead-letters a "__proto__" key) and the entity is untouched', async () => {
    const kafka: Kafka = kafkaClient(testBrokers());
    const d = newDeployment(testBrokers(), 1);
    const proc = new ProcessorProcess(d);
    try {
      await proc.start();
      await proc.waitReady();
      await produceEvents(kafka, d.eventsTopic, [{ key: 'acct-1', event: { type: 'signed_up', at: 1_000, data: {} } }]);
      await waitCaughtUp(kafka, d.appId, d.eventsTopic);
      const before = await proc.getState('acct-1');
      const base = { scanId: 'sec', key: 'acct-1', asOf: 0, issuedAt: 0 };
      const commands: Array<Omit<UpdateCommand, 'commandId'> & { name: string }> = [];
      for (const seg of NASTY) {
        commands.push({
          ...base,
          name: `cond-${seg}`,
          condition: { field: `${seg}.polluted`, op: 'exists' } as never,
          action: { set: { x: 1 } },
        });
        commands.push({
          ...base,
          name: `set-${seg}`,
          condition: { field: 'status', op: 'exists' },
          action: { set: { [`${seg}.polluted`]: true } },
        });
        commands.push({
          ...base,
          name: `unset-${seg}`,
          condition: { field: 'status', op: 'exists' },
          action: { unset: [`a.${seg}`] },
        });
        commands.push({
          ...base,
          name: `inc-${seg}`,
          condition: { field: 'status', op: 'exists' },
          action: { increment: { [`${seg}.x`]: 1 } },
        });
      }
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic: d.commandsTopic,
        messages: [
          ...commands.map(({ name, ...c }) => ({
            key: c.key,
            value: encodeCommand({ ...c, commandId: commandIdFor(name, c.key) }),
          })),
          // A literal "__proto__" key never reaches the aggregate: the decoder dead-letters it.
          {
            key: 'acct-1',
            value: `{"commandId":"p","scanId":"sec","key":"acct-1","asOf":0,"issuedAt":0,"condition":{"field":"status","op":"exists"},"action":{"set":{"a":{"__proto__":{"polluted":true}}}}}`,
          },
        ],
      });
      await producer.disconnect();

      const results = (
        await readTopic(kafka, d.resultsTopic, { count: commands.length, isolation: 'read_committed' })
      ).map((r) => decodeCommandResult(Buffer.from(r.key!), Buffer.from(r.value!)));
      expect(results.map((r) => r.outcome)).toEqual(commands.map(() => 'invalid'));
      for (const r of results) expect(r.reason).toMatch(/reserved and not allowed/);
      const dlq = await readTopic(kafka, d.deadLetterTopic, { count: 1, isolation: 'read_committed' });
      expect(dlq[0]!.headers[DEAD_LETTER_HEADERS.code]).toBe('SCHEMA_INVALID');
      expect(dlq[0]!.headers[DEAD_LETTER_HEADERS.reason]).toMatch(/__proto__: forbidden key/);
      await waitCaughtUp(kafka, d.appId, d.commandsTopic);
      expect(await proc.getState('acct-1')).toEqual(before);
      for (const key of NASTY) expect((await proc.getState(key)).status).toBe(404);
    } finally {
      await proc.kill();
      proc.cleanup();
    }
  });
});
