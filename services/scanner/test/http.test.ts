import { DORMANCY_SWEEP } from '@state-relay/accounts';
import type { FastifyInstance } from 'fastify';
import { rawHttp } from '@state-relay/testkit';
import { FakeScans, NOW, outcomes } from './scan-fakes';
import { buildApp } from '../src/http/app';
import { createLogger } from '../src/logger';
import { createScannerMetrics } from '../src/metrics';
import type { ScanService } from '../src/scans/scan-service';

const TOKEN = 'test-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };

interface Res {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  json(): any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

// fastify's inject() needs light-my-request, whose `cookie` dependency is ESM-only and cannot be
// required under jest on Node 20; the app listens on an ephemeral port instead and gets real requests.
async function call(
  base: string,
  opts: { method: string; url: string; headers?: Record<string, string>; payload?: unknown },
): Promise<Res> {
  const headers = { ...(opts.headers ?? {}) };
  let body: string | undefined;
  if (typeof opts.payload === 'string') body = opts.payload;
  else if (opts.payload !== undefined) {
    body = JSON.stringify(opts.payload);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${opts.url}`, { method: opts.method, headers, body });
  const text = await res.text();
  return { statusCode: res.status, headers: Object.fromEntries(res.headers), body: text, json: () => JSON.parse(text) };
}

describe('scanner HTTP API', () => {
  let app: FastifyInstance;
  let base: string;
  let scans: FakeScans;
  let logs: string[] = [];
  let ready = false;

  // One app for the file (building one costs a few hundred ms); each test gets fresh state.
  beforeAll(async () => {
    const logger = createLogger('trace', { write: (line: string) => void logs.push(line) });
    const service: ScanService = {
      create: (r) => scans.create(r),
      list: (limit, offset) => scans.list(limit, offset),
      get: (id) => scans.get(id),
      cancel: (id) => scans.cancel(id),
    };
    app = buildApp({
      scans: service,
      replica: {
        get ready() {
          return ready;
        },
        lag: () => [{ partition: 0, lag: 3 }],
      },
      metrics: createScannerMetrics(),
      logger,
      apiToken: TOKEN,
      maxBodyBytes: 4_096,
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  beforeEach(() => {
    scans = new FakeScans();
    logs = [];
    ready = false;
  });
  afterAll(() => app.close());

  const inject = (opts: { method: string; url: string; headers?: Record<string, string>; payload?: unknown }) =>
    call(base, opts);
  const post = (url: string, payload?: unknown, headers: Record<string, string> = auth) =>
    inject({ method: 'POST', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  it('creates a scan: 202 with the scan and its URL', async () => {
    const res = await post('/scans', { ...DORMANCY_SWEEP, options: { rate: 100, dryRun: false }, asOf: NOW });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body.url).toBe('/scans/scan-1');
    expect(res.headers.location).toBe('/scans/scan-1');
    expect(body.scan).toMatchObject({
      id: 'scan-1',
      status: 'pending',
      phase: null,
      asOf: '2026-11-01T00:00:00.000Z',
      options: { rate: 100, dryRun: false },
      condition: DORMANCY_SWEEP.condition,
      action: DORMANCY_SWEEP.action,
      counts: { scanned: 0, matched: 0, emitted: 0, pending: 0, results: outcomes },
      replicaLag: { total: 0, partitions: [{ partition: 0, lag: 0 }] },
    });
  });

  it.each([
    [
      'an unknown operator',
      { ...DORMANCY_SWEEP, condition: { field: 'status', op: 'eqq', value: 1 } },
      '/body/condition/op',
    ],
    ['an unknown domain action', { ...DORMANCY_SWEEP, action: { domain: 'nope' } }, '/body/action/domain'],
    ['an unknown top-level property', { ...DORMANCY_SWEEP, conditon: {} }, '/body/conditon'],
    ['an unknown option', { ...DORMANCY_SWEEP, options: { rat: 5 } }, '/body/options/rat'],
    ['a wrong type', { ...DORMANCY_SWEEP, options: { rate: '5' } }, '/body/options/rate'],
    ['a negative rate', { ...DORMANCY_SWEEP, options: { rate: -1 } }, '/body/options/rate'],
    ['a fractional batch size', { ...DORMANCY_SWEEP, options: { batchSize: 1.5 } }, '/body/options/batchSize'],
    ['a missing action', { condition: DORMANCY_SWEEP.condition }, '/body/action'],
    ['a condition that is not an object', { ...DORMANCY_SWEEP, condition: 'status = active' }, '/body/condition'],
    ['an asOf of the wrong type', { ...DORMANCY_SWEEP, asOf: true }, '/body/asOf'],
    ['an unparseable asOf', { ...DORMANCY_SWEEP, asOf: 'last tuesday' }, '/body/asOf'],
  ])('rejects %s with 400 naming the field', async (_what, body, path) => {
    const res = await post('/scans', body);
    expect(res.statusCode).toBe(400);
    const json = res.json();
    expect(json.error).toBe('invalid_request');
    expect(json.issues.map((i: { path: string }) => i.path)).toContain(path);
    expect(json.message).toContain(path);
    expect(scans.records.size).toBe(0);
  });

  it('rejects bodies that are not JSON, or not JSON at all, with a 4xx', async () => {
    const bad = await inject({
      method: 'POST',
      url: '/scans',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"condition":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'invalid_json', message: 'the body is not valid JSON' });
    const proto = await inject({
      method: 'POST',
      url: '/scans',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"__proto__":{"x":1}}',
    });
    expect(proto.statusCode).toBe(400);
    const text = await inject({
      method: 'POST',
      url: '/scans',
      headers: { ...auth, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().error).toBe('unsupported_media_type');
  });

  it('rejects a body above MAX_BODY_BYTES with 413', async () => {
    const res = await post('/scans', { ...DORMANCY_SWEEP, padding: 'x'.repeat(5_000) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'body_too_large', message: 'the body is larger than 4096 bytes' });
  });

  it.each([
    ['POST', '/scans'],
    ['GET', '/scans'],
    ['GET', '/scans/scan-1'],
    ['POST', '/scans/scan-1/cancel'],
  ])('%s %s needs the bearer token: 401 without it or with a wrong one', async (method, url) => {
    const wrong = 'wrong-token-but-long-enough-xyz';
    for (const headers of [{}, { authorization: `Bearer ${wrong}` }, { authorization: `Basic ${TOKEN}` }]) {
      const res = await inject({ method, url, headers, payload: method === 'POST' ? DORMANCY_SWEEP : undefined });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.json().error).toBe('unauthorized');
      expect(res.body).not.toContain(wrong);
      expect(res.body).not.toContain(TOKEN);
    }
    expect(scans.records.size).toBe(0);
  });

  it('a 15 KB Authorization header: 401, and no regular expression runs on it', async () => {
    // Blanks then a non-blank: the shape that made the former header expression backtrack.
    const authorization = `Bearer a${' '.repeat(15_000)}!`;
    const exec = jest.spyOn(RegExp.prototype, 'exec');
    try {
      const res = await rawHttp(
        base,
        `GET /scans HTTP/1.1\r\nHost: x\r\nAuthorization: ${authorization}\r\nConnection: close\r\n\r\n`,
      );
      expect([res.status, JSON.parse(res.body).error]).toEqual([401, 'unauthorized']);
      expect(exec.mock.calls.filter(([input]) => String(input).length > 1_000)).toEqual([]);
    } finally {
      exec.mockRestore();
    }
  });

  it('never writes the token to the logs', async () => {
    await post('/scans', DORMANCY_SWEEP);
    await post('/scans', { bogus: true });
    await post('/scans', DORMANCY_SWEEP, { authorization: 'Bearer not-the-token-at-all-000' });
    await inject({ method: 'GET', url: '/scans/nope', headers: auth });
    app.log.info({ headers: auth, req: { headers: auth } }, 'a careless log line');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.join('')).not.toContain(TOKEN);
    expect(logs.join('')).not.toContain('not-the-token-at-all-000');
  });

  it('answers 404 for an unknown scan and an unknown route', async () => {
    const scan = await inject({ method: 'GET', url: '/scans/does-not-exist', headers: auth });
    expect(scan.statusCode).toBe(404);
    expect(scan.json()).toEqual({ error: 'scan_not_found', message: 'no scan with id "does-not-exist"' });
    const cancel = await post('/scans/does-not-exist/cancel');
    expect(cancel.statusCode).toBe(404);
    const route = await inject({ method: 'GET', url: '/nothing-here' });
    expect(route.statusCode).toBe(404);
    expect(route.json().error).toBe('route_not_found');
  });

  it('cancels a scan, and answers 409 once it has finished', async () => {
    await post('/scans', DORMANCY_SWEEP);
    const first = await post('/scans/scan-1/cancel');
    expect(first.statusCode).toBe(200);
    expect(first.json().status).toBe('cancelled');
    const again = await post('/scans/scan-1/cancel');
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ error: 'scan_finished', message: 'scan scan-1 is already cancelled' });
  });

  it('lists scans newest first, with limit and offset', async () => {
    for (let i = 0; i < 3; i++) await post('/scans', DORMANCY_SWEEP);
    const res = await inject({ method: 'GET', url: '/scans?limit=2&offset=0', headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect(res.json().scans.map((s: { id: string }) => s.id)).toEqual(['scan-3', 'scan-2']);
    const bad = await inject({ method: 'GET', url: '/scans?limit=1000&sort=asc', headers: auth });
    expect(bad.statusCode).toBe(400);
    const notNumber = await inject({ method: 'GET', url: '/scans?limit=ten', headers: auth });
    expect(notNumber.statusCode).toBe(400);
    expect(notNumber.json().issues[0].path).toBe('/querystring/limit');
  });

  it('keeps health, readiness, metrics and the OpenAPI document open', async () => {
    expect((await inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const notReady = await inject({ method: 'GET', url: '/readyz' });
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json()).toEqual({ ready: false, replicaLag: { total: 3, partitions: [{ partition: 0, lag: 3 }] } });
    ready = true;
    expect((await inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const metrics = await inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('scanner_commands_emitted_total');
    expect(metrics.body).toContain('# TYPE scanner_replica_lag_records gauge');
    // Node's defaults under their standard names, told apart by a label, not a prefix.
    expect(metrics.body).toMatch(/^process_cpu_user_seconds_total\{service="scanner"\} /m);
    expect(metrics.body).toMatch(/^nodejs_heap_size_used_bytes\{service="scanner"\} /m);
    expect(metrics.body).not.toMatch(/^scanner_(process|nodejs)_/m);
    const doc = await inject({ method: 'GET', url: '/openapi.json' });
    expect(doc.statusCode).toBe(200);
    const openapi = doc.json();
    expect(openapi.openapi).toBe('3.0.3');
    expect(openapi.info.title).toBe('state-relay scanner');
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining(['/scans', '/scans/{id}', '/scans/{id}/cancel', '/healthz', '/readyz', '/metrics']),
    );
    expect(openapi.paths['/scans'].post.security).toEqual([{ bearerAuth: [] }]);
  });

  it('hides internals behind a 500', async () => {
    scans.get = () => {
      throw new Error('SQLITE_CORRUPT: /var/lib/secret/path.sqlite');
    };
    const res = await inject({ method: 'GET', url: '/scans/x', headers: auth });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'internal_error', message: 'internal error' });
  });
});
