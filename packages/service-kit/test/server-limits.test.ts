import { Type } from '@sinclair/typebox';
import { rawHttp } from '@state-relay/testkit';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import {
  createServiceApp,
  createServiceRegistry,
  httpRequestDuration,
  metricFactory,
  HTTP_ERRORS,
  HTTP_SERVER_LIMITS,
  type HttpServerLimits,
} from '../src';

function demoMetrics() {
  const registry = createServiceRegistry('demo');
  return { registry, httpRequestDuration: httpRequestDuration(metricFactory(registry), 'demo') };
}

// A real listening server and raw sockets that play slow, stalled or oversized clients. The limits
// are small so a stalled client is cut soon; the assertions are on what the client gets.
async function start(limits?: Partial<HttpServerLimits>): Promise<{ app: FastifyInstance; base: string }> {
  const app = createServiceApp({
    service: 'demo',
    description: 'a demo',
    logger: pino({ level: 'silent' }),
    bodyLimit: 1024,
    errors: HTTP_ERRORS,
    metrics: demoMetrics(),
    readiness: {
      description: 'always',
      schema: Type.Object({ ready: Type.Boolean() }),
      report: () => ({ ready: true }),
    },
    limits,
  });
  app.register(async (scope) => {
    scope.post('/things', { schema: { body: Type.Object({ n: Type.Integer() }) } }, async () => ({ ok: true }));
  });
  return { app, base: await app.listen({ host: '127.0.0.1', port: 0 }) };
}

describe('the limits of a service’s HTTP server', () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(
    async () => ({ app, base } = await start({ headersTimeoutMs: 200, requestTimeoutMs: 400, maxHeaderBytes: 2048 })),
  );
  afterAll(() => app.close());

  it('a client whose headers never end gets 408 request_timeout and a closed socket', async () => {
    const res = await rawHttp(base, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1');
    expect([res.status, JSON.parse(res.body)]).toEqual([
      408,
      { error: 'request_timeout', message: 'the request did not arrive in time' },
    ]);
  });

  it('a client whose body never ends gets 408 and a closed socket', async () => {
    const head = 'POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n';
    const res = await rawHttp(base, `${head}{"n":`);
    expect([res.status, JSON.parse(res.body).error]).toEqual([408, 'request_timeout']);
  });

  it('a connection that sends nothing is closed', async () => {
    const res = await rawHttp(base, '');
    expect([408, null]).toContain(res.status);
  });

  it('headers past the bound get 431 headers_too_large', async () => {
    const res = await rawHttp(base, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(4096)}\r\n\r\n`);
    expect([res.status, JSON.parse(res.body)]).toEqual([
      431,
      { error: 'headers_too_large', message: 'the request line and headers are too large' },
    ]);
  });

  it('a request that is not HTTP gets 400 malformed_request', async () => {
    const res = await rawHttp(base, 'HELLO\r\n\r\n');
    expect([res.status, JSON.parse(res.body).error]).toEqual([400, 'malformed_request']);
  });

  it('a well-behaved client is still answered', async () => {
    const res = await rawHttp(base, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect([res.status, JSON.parse(res.body)]).toEqual([200, { status: 'ok' }]);
  });
});

describe('the default limits', () => {
  it('bound every timeout and the header size of the server listen creates', async () => {
    const { app } = await start();
    try {
      const server = app.server;
      expect({
        headersTimeoutMs: server.headersTimeout,
        requestTimeoutMs: server.requestTimeout,
        idleTimeoutMs: server.timeout,
        keepAliveTimeoutMs: server.keepAliveTimeout,
        maxHeaderBytes: (server as unknown as { maxHeaderSize?: number }).maxHeaderSize,
      }).toEqual(HTTP_SERVER_LIMITS);
      expect(HTTP_SERVER_LIMITS.headersTimeoutMs).toBeGreaterThan(0);
      expect(HTTP_SERVER_LIMITS.requestTimeoutMs).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });
});
