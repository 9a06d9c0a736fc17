import { DORMANCY_SWEEP } from '@state-relay/accounts';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/http/app';
import { createLogger } from '../src/logger';
import { createScannerMetrics } from '../src/metrics';
import { StoreScheduleService } from '../src/schedules/schedule-service';
import { FakeScanService, tempStores } from './schedule-fakes';

const TOKEN = 'test-token-0123456789abcdef';
const NOW = Date.UTC(2026, 10, 1);
const auth = { authorization: `Bearer ${TOKEN}` };
const MIN_INTERVAL_MS = 300_000; // SCHEDULE_MIN_INTERVAL_MS: 5 minutes
const valid = { name: 'dormancy', interval: 'PT1H', template: { ...DORMANCY_SWEEP, options: { dryRun: true } } };

describe('/schedules over HTTP', () => {
  let app: FastifyInstance;
  let base: string;
  let stores: ReturnType<typeof tempStores>;

  // Listens on an ephemeral port: fastify's inject() cannot be loaded under jest here (see http.test.ts).
  beforeAll(async () => {
    stores = tempStores();
    const scans = new FakeScanService();
    app = buildApp({
      scans: { ...scans, list: () => ({ scans: [], total: 0 }), cancel: async () => scans.get('') },
      replica: { ready: true, lag: () => [] },
      metrics: createScannerMetrics(),
      logger: createLogger('silent'),
      apiToken: TOKEN,
      maxBodyBytes: 4_096,
      schedules: new StoreScheduleService({
        store: stores.schedules,
        scans,
        knownDomainActions: ['mark_dormant'],
        minIntervalMs: MIN_INTERVAL_MS,
        now: () => NOW,
      }),
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app.close();
    stores.close();
  });

  async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = auth) {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      text,
      json: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
    };
  }
  const issuePaths = async (body: unknown) => {
    const res = await call('POST', '/schedules', body);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('invalid_request');
    return (res.json.issues as Array<{ path: string }>).map((i) => i.path);
  };

  it('creates, lists, reads, pauses, renames and deletes a schedule', async () => {
    const created = await call('POST', '/schedules', { ...valid, timeZone: 'Europe/Berlin' });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect(created.headers.get('location')).toBe(`/schedules/${id}`);
    expect(created.json).toMatchObject({
      name: 'dormancy',
      interval: 'PT1H',
      timeZone: 'Europe/Berlin',
      paused: false,
      createdAt: new Date(NOW).toISOString(),
      lastRunAt: null,
      nextRunAt: new Date(NOW + 3_600_000).toISOString(),
      lastRuns: [],
      template: valid.template,
    });
    expect(created.json).not.toHaveProperty('cron');

    expect((await call('GET', '/schedules')).json.schedules.map((s: { id: string }) => s.id)).toContain(id);
    expect((await call('GET', `/schedules/${id}`)).json.id).toBe(id);

    const paused = await call('PATCH', `/schedules/${id}`, { paused: true, name: 'renamed' });
    expect(paused.status).toBe(200);
    expect(paused.json).toMatchObject({ paused: true, name: 'renamed', nextRunAt: null });

    expect((await call('DELETE', `/schedules/${id}`)).status).toBe(204);
    const gone = await call('GET', `/schedules/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.json.error).toBe('schedule_not_found');
  });

  it('defaults the time zone to UTC and accepts cron', async () => {
    const res = await call('POST', '/schedules', { name: 'n', cron: '@daily', template: DORMANCY_SWEEP });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ cron: '@daily', timeZone: 'UTC', nextRunAt: '2026-11-02T00:00:00.000Z' });
  });

  it('answers 400 naming each offending field', async () => {
    expect(await issuePaths({ ...valid, name: undefined })).toEqual(['/body/name']);
    expect(await issuePaths({ ...valid, extra: 1 })).toEqual(['/body/extra']);
    expect(await issuePaths({ ...valid, template: { ...valid.template, options: { rate: 'x' } } })).toEqual([
      '/body/template/options/rate',
    ]);
    expect(await issuePaths({ ...valid, interval: 'PT30S' })).toEqual(['/body/interval']);
    expect(await issuePaths({ ...valid, interval: undefined, cron: '0 25 * * *' })).toEqual(['/body/cron']);
    expect(await issuePaths({ ...valid, cron: '@daily' })).toEqual(['/body']);
    expect(await issuePaths({ ...valid, timeZone: 'Mars/Base' })).toEqual(['/body/timeZone']);
    const rules = await issuePaths({
      ...valid,
      template: { condition: { field: 'status', op: 'nope', value: 1 }, action: { domain: 'unknown' } },
    });
    expect(rules.some((p) => p.startsWith('/body/template/condition'))).toBe(true);
    expect(rules.some((p) => p.startsWith('/body/template/action'))).toBe(true);
    const patch = await call('PATCH', '/schedules/x', { paused: 'yes' });
    expect(patch.status).toBe(400);
    expect(patch.json.issues[0].path).toBe('/body/paused');
    expect((await call('PATCH', '/schedules/x', {})).status).toBe(400);
  });

  it('refuses a cron whose runs come closer than SCHEDULE_MIN_INTERVAL_MS, naming /body/cron', async () => {
    const cron = (expression: string) => ({ ...valid, interval: undefined, cron: expression });
    for (const expression of ['* * * * *', '*/4 * * * *', '0,58 * * * *']) {
      const res = await call('POST', '/schedules', cron(expression));
      expect([expression, res.status, res.json.issues]).toEqual([
        expression,
        400,
        [{ path: '/body/cron', message: expect.stringContaining('less than the minimum of 5 minutes') }],
      ]);
    }
    expect((await call('POST', '/schedules', cron('*/5 * * * *'))).status).toBe(201);
    const interval = await call('POST', '/schedules', { ...valid, interval: 'PT4M' });
    expect([interval.status, interval.json.issues[0].path]).toEqual([400, '/body/interval']);
  });

  it('answers 404 for an unknown schedule', async () => {
    for (const [method, body] of [['GET'], ['PATCH', { paused: true }], ['DELETE']] as const) {
      const res = await call(method, '/schedules/nope', body);
      expect(res.status).toBe(404);
      expect(res.json.error).toBe('schedule_not_found');
    }
  });

  it('needs the bearer token on every schedule route', async () => {
    for (const [method, url] of [
      ['POST', '/schedules'],
      ['GET', '/schedules'],
      ['GET', '/schedules/x'],
      ['PATCH', '/schedules/x'],
      ['DELETE', '/schedules/x'],
    ]) {
      const res = await call(method!, url!, method === 'POST' || method === 'PATCH' ? valid : undefined, {});
      expect(res.status).toBe(401);
      expect(res.json.error).toBe('unauthorized');
    }
    expect((await call('GET', '/schedules', undefined, { authorization: 'Bearer wrong-token-000000' })).status).toBe(
      401,
    );
  });

  it('serves the status page at / without a token, with a CSP, and keeps it out of the OpenAPI document', async () => {
    const res = await call('GET', '/', undefined, {});
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('id="token"');
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    const paths = Object.keys((await call('GET', '/openapi.json')).json.paths);
    expect(paths).not.toContain('/');
    expect(paths).toEqual(expect.arrayContaining(['/schedules', '/schedules/{id}']));
  });
});
