import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { rawHttp } from '@state-relay/testkit';
import pino from 'pino';
import type { Registry } from 'prom-client';
import {
  createServiceApp,
  createServiceRegistry,
  HTTP_ERRORS,
  httpRequestDuration,
  LATENCY_BUCKETS,
  metricFactory,
  requireBearer,
  ServiceError,
} from '../src';

// A service built on the kit, on a real port (fastify's inject needs an ESM-only dependency that
// jest cannot load on Node 20).
const TOKEN = 'kit-test-token-0123456789';
const ERRORS = {
  ...HTTP_ERRORS,
  thing_gone: { status: 410, meaning: 'gone' },
  store_down: { status: 503, meaning: 'x' },
};

async function start(ready: { value: boolean }, logs: string[] = []) {
  const registry = createServiceRegistry('demo');
  const app = createServiceApp({
    service: 'demo',
    description: 'a demo',
    logger: pino({ level: 'trace' }, { write: (line: string) => void logs.push(line) }),
    bodyLimit: 64,
    errors: ERRORS,
    metrics: { registry, httpRequestDuration: httpRequestDuration(metricFactory(registry), 'demo') },
    readiness: {
      description: 'ready when told',
      schema: Type.Object({ ready: Type.Boolean(), parts: Type.Array(Type.Integer()) }),
      report: () => ({ ready: ready.value, parts: [1, 2] }),
    },
  });
  app.register(async (scope) => {
    scope.addHook('onRequest', requireBearer(TOKEN));
    scope.get(
      '/things/:id',
      { schema: { security: [{ bearerAuth: [] }], params: Type.Object({ id: Type.String({ maxLength: 4 }) }) } },
      async (request) => {
        const { id } = request.params as { id: string };
        if (id === 'gone') throw new ServiceError('thing_gone', 'the thing is gone');
        if (id === 'down') throw new ServiceError('store_down', 'SQLITE_BUSY at /secret/path');
        if (id === 'boom') throw new Error('SQLITE_CORRUPT: /secret/path');
        return { id };
      },
    );
    scope.post(
      '/things',
      { schema: { body: Type.Object({ n: Type.Integer() }, { additionalProperties: false }) } },
      async () => ({
        ok: true,
      }),
    );
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, base, registry };
}

async function call(base: string, path: string, init: RequestInit = {}) {
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  let json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const auth = { authorization: `Bearer ${TOKEN}` };
const post = (body: string, type = 'application/json') => ({
  method: 'POST',
  headers: { ...auth, 'content-type': type },
  body,
});

describe('the HTTP base every service gets', () => {
  const ready = { value: false };
  const logs: string[] = [];
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => ({ app, base } = await start(ready, logs)));
  afterAll(() => app.close());

  it('answers a schema violation with invalid_request naming the field', async () => {
    const res = await call(base, '/things/toolong', { headers: auth });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      error: 'invalid_request',
      message: '/params/id: must NOT have more than 4 characters',
      issues: [{ path: '/params/id', message: 'must NOT have more than 4 characters' }],
    });
    const unknown = await call(base, '/things', post('{"n":1,"m":2}'));
    expect(unknown.json.issues).toEqual([{ path: '/body/m', message: 'unknown property "m"' }]);
    const wrongType = await call(base, '/things', post('{"n":"1"}'));
    expect(wrongType.json.issues).toEqual([{ path: '/body/n', message: 'must be integer' }]);
  });

  it('answers bodies it cannot take in the same contract', async () => {
    expect((await call(base, '/things', post('{"n":'))).json).toEqual({
      error: 'invalid_json',
      message: 'the body is not valid JSON',
    });
    const big = await call(base, '/things', post(JSON.stringify({ n: 1, pad: 'x'.repeat(100) })));
    expect([big.status, big.json]).toEqual([
      413,
      { error: 'body_too_large', message: 'the body is larger than 64 bytes' },
    ]);
    const text = await call(base, '/things', post('n=1', 'text/plain'));
    expect([text.status, text.json.error]).toEqual([415, 'unsupported_media_type']);
  });

  it("maps a service's own error through its table, and hides what a 5xx would leak", async () => {
    const gone = await call(base, '/things/gone', { headers: auth });
    expect([gone.status, gone.json]).toEqual([410, { error: 'thing_gone', message: 'the thing is gone' }]);
    const down = await call(base, '/things/down', { headers: auth });
    expect([down.status, down.json]).toEqual([503, { error: 'store_down', message: 'internal error' }]);
    const boom = await call(base, '/things/boom', { headers: auth });
    expect([boom.status, boom.json]).toEqual([500, { error: 'internal_error', message: 'internal error' }]);
    expect(logs.some((line) => line.includes('SQLITE_CORRUPT') && line.includes('"level":50'))).toBe(true);
  });

  it('answers an unknown route and a malformed path in the contract', async () => {
    expect((await call(base, '/nope?x=1')).json).toEqual({ error: 'route_not_found', message: 'no route GET /nope' });
    const bad = await call(base, '/things/%E0%A4%A', { headers: auth });
    expect([bad.status, bad.json.error]).toEqual([400, 'invalid_request']);
  });

  it('asks for the bearer token with WWW-Authenticate naming the service', async () => {
    const none = await call(base, '/things/a');
    expect([none.status, none.json]).toEqual([
      401,
      { error: 'unauthorized', message: 'a bearer token is required: Authorization: Bearer <token>' },
    ]);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="state-relay-demo"');
    const wrong = await call(base, '/things/a', { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.json.message).toBe('the bearer token is not valid');
    expect(wrong.text).not.toContain(TOKEN);
    expect((await call(base, '/things/a', { headers: auth })).json).toEqual({ id: 'a' });
  });

  it('answers a 15 KB Authorization header with 401, running no regular expression on it', async () => {
    // Blanks then a non-blank: the shape that made the former header expression backtrack.
    const authorization = `Bearer a${' '.repeat(15_000)}!`;
    const exec = jest.spyOn(RegExp.prototype, 'exec');
    try {
      const res = await rawHttp(
        base,
        `GET /things/a HTTP/1.1\r\nHost: x\r\nAuthorization: ${authorization}\r\nConnection: close\r\n\r\n`,
      );
      expect([res.status, JSON.parse(res.body)]).toEqual([
        401,
        { error: 'unauthorized', message: 'the bearer token is not valid' },
      ]);
      expect(exec.mock.calls.filter(([input]) => String(input).length > 1_000)).toEqual([]);
    } finally {
      exec.mockRestore();
    }
  });

  it('serves health, readiness (503 until ready), metrics and the OpenAPI document, open', async () => {
    expect((await call(base, '/healthz')).json).toEqual({ status: 'ok' });
    expect(await call(base, '/readyz')).toMatchObject({ status: 503, json: { ready: false, parts: [1, 2] } });
    ready.value = true;
    expect(await call(base, '/readyz')).toMatchObject({ status: 200, json: { ready: true, parts: [1, 2] } });
    const metrics = await call(base, '/metrics');
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(metrics.text).toMatch(/^process_cpu_user_seconds_total\{service="demo"\} /m);
    const doc = (await call(base, '/openapi.json')).json;
    expect(doc.info.title).toBe('state-relay demo');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/healthz', '/readyz', '/metrics', '/openapi.json', '/things/{id}', '/things']),
    );
    expect(doc.paths['/things/{id}'].get.security).toEqual([{ bearerAuth: [] }]);
  });
});

describe('the request metrics every service gets', () => {
  let app: FastifyInstance;
  let base: string;
  let registry: Registry;
  beforeAll(async () => ({ app, base, registry } = await start({ value: true })));
  afterAll(() => app.close());

  /** The count of each series of demo_http_request_duration_seconds, keyed `METHOD route status`. */
  async function counts(): Promise<Record<string, number>> {
    const metric = (await registry.getSingleMetric('demo_http_request_duration_seconds')!.get()).values;
    return Object.fromEntries(
      metric
        .filter((v) => v.metricName === 'demo_http_request_duration_seconds_count')
        .map((v) => [`${v.labels.method} ${v.labels.route} ${v.labels.status_code}`, v.value]),
    );
  }

  it('observes each answered request under its route pattern and status, never its URL', async () => {
    await call(base, '/things/a', { headers: auth });
    await call(base, '/things/b?x=1', { headers: auth });
    await call(base, '/things/gone', { headers: auth });
    await call(base, '/things/c');
    await call(base, '/things', post('{"n":1}'));
    await call(base, '/healthz');
    expect(await counts()).toEqual({
      'GET /things/:id 200': 2,
      'GET /things/:id 410': 1,
      'GET /things/:id 401': 1,
      'POST /things 200': 1,
      'GET /healthz 200': 1,
    });
  });

  it('puts every request no route matches under one route value, whatever its URL', async () => {
    const before = await counts();
    await call(base, '/nope/123');
    await call(base, '/nope/456?q=1');
    await call(base, '/things/%E0%A4%A', { headers: auth }); // the router refuses it before routing
    const after = await counts();
    expect(after['GET unmatched 404']).toBe((before['GET unmatched 404'] ?? 0) + 2);
    expect(after['GET unmatched 400']).toBe((before['GET unmatched 400'] ?? 0) + 1);
    expect(Object.keys(after).filter((k) => /123|456|%/.test(k))).toEqual([]);
  });

  it('exports the histogram with the shared latency buckets, 10 ms to 10 s', async () => {
    await call(base, '/healthz');
    const text = await (await fetch(`${base}/metrics`)).text();
    const bounds = [
      ...text.matchAll(
        /^demo_http_request_duration_seconds_bucket\{le="([^"]+)",method="GET",route="\/healthz",status_code="200"\}/gm,
      ),
    ].map((m) => m[1]);
    expect(bounds).toEqual([...LATENCY_BUCKETS.map(String), '+Inf']);
    expect(LATENCY_BUCKETS).toEqual(expect.arrayContaining([0.01, 0.1, 1, 10]));
  });
});
