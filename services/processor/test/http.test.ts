import type { StoredEntity } from '@state-relay/contracts';
import type { FastifyInstance } from 'fastify';
import { rawHttp } from '@state-relay/testkit';
import pino from 'pino';
import { buildApp } from '../src/http/app';
import type { StateReadAuth } from '../src/config';
import { createProcessorMetrics } from '../src/metrics';

// The processor's HTTP surface on a real port: reading an entity needs the bearer token;
// health, readiness and metrics stay open for probes and scrapers.
const TOKEN = 'processor-state-token-7f3a9c2e51';
const entity: StoredEntity = { version: 4, value: { status: 'active', balance: 120 }, seen: '' };

async function start(stateAuth: StateReadAuth, logs: string[]): Promise<{ app: FastifyInstance; base: string }> {
  const app = buildApp({
    processor: {
      isReady: true,
      tasks: {
        owned: [0, 1],
        read: async (key: string) => {
          if (key === 'explode') throw new Error('SQLITE_CORRUPT: /var/lib/state/task-1.sqlite');
          return key === 'acct-1' ? { task: 1, entity } : undefined;
        },
      } as never,
    },
    metrics: createProcessorMetrics(),
    // trace: every line fastify would log about a request ends up here.
    logger: pino({ level: 'trace' }, { write: (line: string) => void logs.push(line) }),
    stateAuth,
  });
  return { app, base: await app.listen({ host: '127.0.0.1', port: 0 }) };
}

async function get(base: string, path: string, authorization?: string) {
  const res = await fetch(`${base}${path}`, { headers: authorization === undefined ? {} : { authorization } });
  const text = await res.text();
  return { status: res.status, text, headers: res.headers };
}

describe('processor HTTP: GET /state/:key behind a bearer token', () => {
  const logs: string[] = [];
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => ({ app, base } = await start({ kind: 'bearer', token: TOKEN }, logs)));
  afterAll(() => app.close());

  it.each([
    ['no Authorization header', undefined, 'a bearer token is required: Authorization: Bearer <token>'],
    ['an empty bearer', 'Bearer ', 'a bearer token is required: Authorization: Bearer <token>'],
    ['a wrong token', 'Bearer not-the-token-0123456789', 'the bearer token is not valid'],
    ['a truncated token', `Bearer ${TOKEN.slice(0, -1)}`, 'the bearer token is not valid'],
    ['the token as Basic', `Basic ${TOKEN}`, 'a bearer token is required: Authorization: Bearer <token>'],
  ])('%s: 401 in the API error shape, with WWW-Authenticate', async (_what, authorization, message) => {
    const res = await get(base, '/state/acct-1', authorization);
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text)).toEqual({ error: 'unauthorized', message });
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(res.text).not.toContain('balance');
  });

  it('a 15 KB Authorization header: 401, and no regular expression runs on it', async () => {
    // Blanks then a non-blank: the shape that made the former header expression backtrack.
    const authorization = `Bearer a${' '.repeat(15_000)}!`;
    const exec = jest.spyOn(RegExp.prototype, 'exec');
    try {
      const res = await rawHttp(
        base,
        `GET /state/acct-1 HTTP/1.1\r\nHost: x\r\nAuthorization: ${authorization}\r\nConnection: close\r\n\r\n`,
      );
      expect([res.status, JSON.parse(res.body).error]).toEqual([401, 'unauthorized']);
      expect(exec.mock.calls.filter(([input]) => String(input).length > 1_000)).toEqual([]);
    } finally {
      exec.mockRestore();
    }
  });

  it('the right token: 200 with the entity; an unknown key: 404', async () => {
    const ok = await get(base, '/state/acct-1', `Bearer ${TOKEN}`);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toEqual({ key: 'acct-1', task: 1, version: 4, value: entity.value });
    expect((await get(base, '/state/acct-2', `bearer  ${TOKEN} `)).status).toBe(404);
  });

  it('health, readiness, metrics and the OpenAPI document stay open', async () => {
    expect((await get(base, '/healthz')).status).toBe(200);
    expect(JSON.parse((await get(base, '/readyz')).text)).toEqual({ ready: true, tasks: [0, 1] });
    const metrics = await get(base, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('# TYPE processor_consumer_lag_records gauge');
    // Node's defaults under their standard names, told apart by a label, not a prefix.
    expect(metrics.text).toMatch(/^process_cpu_user_seconds_total\{service="processor"\} /m);
    expect(metrics.text).toMatch(/^nodejs_heap_size_used_bytes\{service="processor"\} /m);
    expect(metrics.text).not.toMatch(/^processor_(process|nodejs)_/m);
    const doc = await get(base, '/openapi.json');
    expect(doc.status).toBe(200);
    const openapi = JSON.parse(doc.text);
    expect(openapi.info.title).toBe('state-relay processor');
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining(['/healthz', '/readyz', '/metrics', '/openapi.json', '/state/{key}']),
    );
    expect(openapi.paths['/state/{key}'].get.security).toEqual([{ bearerAuth: [] }]);
  });

  it('answers a key outside the schema in the shared error contract, naming the field', async () => {
    const res = await get(base, `/state/${'k'.repeat(513)}`, `Bearer ${TOKEN}`);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toEqual({
      error: 'invalid_request',
      message: '/params/key: must NOT have more than 512 characters',
      issues: [{ path: '/params/key', message: 'must NOT have more than 512 characters' }],
    });
    expect(res.text).not.toContain('FST_');
  });

  it('reads a key of any length a record key may have (512 bytes)', async () => {
    const res = await get(base, `/state/${'k'.repeat(512)}`, `Bearer ${TOKEN}`);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toMatchObject({ error: 'not_found', ownedTasks: [0, 1] });
  });

  it('answers an unknown route with route_not_found', async () => {
    const res = await get(base, '/nope?x=1');
    expect([res.status, JSON.parse(res.text)]).toEqual([
      404,
      { error: 'route_not_found', message: 'no route GET /nope' },
    ]);
  });

  it('hides internals behind a 500', async () => {
    const res = await get(base, '/state/explode', `Bearer ${TOKEN}`);
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual({ error: 'internal_error', message: 'internal error' });
  });

  it('never echoes or logs the token', async () => {
    for (const authorization of [`Bearer ${TOKEN}`, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`]) {
      for (const path of ['/state/acct-1', '/state/acct-2', '/nope']) {
        const res = await get(base, path, authorization);
        expect(res.text).not.toContain(TOKEN);
      }
    }
    expect(logs.length).toBeGreaterThan(0);
    for (const line of logs) expect(line).not.toContain(TOKEN);
  });
});

describe('processor HTTP with STATE_API_AUTH=off', () => {
  it('serves GET /state/:key without a token', async () => {
    const { app, base } = await start({ kind: 'off' }, []);
    try {
      expect((await get(base, '/state/acct-1')).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});
