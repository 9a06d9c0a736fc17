import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import { waitUntil } from '@state-relay/testkit';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/http/app';
import { ScanNotFoundError } from '../src/errors';
import { createLogger } from '../src/logger';
import { createScannerMetrics } from '../src/metrics';
import { ScanRateHistory } from '../src/http/routes/status';
import type { ScanService } from '../src/scans/scan-service';
import type { ScanView } from '../src/scans/scan-view';

const TOKEN = 'status-route-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };

function view(id: string, status: ScanView['status'], emitted: number, applied: number): ScanView {
  const results = Object.fromEntries(COMMAND_OUTCOMES.map((o) => [o, 0])) as ScanView['counts']['results'];
  return {
    id,
    url: `/scans/${id}`,
    status,
    phase: status === 'running' ? 'walking' : null,
    condition: {},
    action: {},
    options: {},
    asOf: '2026-11-01T00:00:00.000Z',
    counts: {
      scanned: emitted,
      matched: emitted,
      emitted,
      pending: emitted - applied,
      results: { ...results, applied },
    },
    progress: { replicaRows: null, fraction: null, etaSeconds: null, eta: null },
    pace: null,
    backoffSeconds: 0,
    replicaLag: { total: 0, partitions: [] },
    createdAt: '2026-11-01T00:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    error: null,
  };
}

/** Scans as the sampler sees them: newest first, each replaced as the test moves it on. */
class FakeScans implements Pick<ScanService, 'list' | 'get'> {
  readonly scans = new Map<string, ScanView>();
  set(scan: ScanView): void {
    this.scans.set(scan.id, scan);
  }
  list(limit: number, offset: number) {
    const all = [...this.scans.values()].reverse();
    return { scans: all.slice(offset, offset + limit), total: all.length };
  }
  get(id: string): ScanView {
    const scan = this.scans.get(id);
    if (!scan) throw new ScanNotFoundError(id);
    return scan;
  }
}

describe('ScanRateHistory: commands sent and results per second from once-a-second samples', () => {
  it('turns the running scan’s cumulative counts into rates, with the command lag of each sample', async () => {
    const scans = new FakeScans();
    let now = 0;
    let lag = 0;
    const history = new ScanRateHistory(
      scans,
      async () => lag,
      () => now,
    );
    await history.tick();
    expect(history.latest()).toBeNull(); // nothing running, nothing sampled

    for (const [at, emitted, applied, lagThen] of [
      [1_000, 0, 0, 0],
      [2_000, 50, 20, 30],
      [3_000, 100, 70, 30],
      [5_000, 100, 100, 0],
    ] as const) {
      now = at;
      lag = lagThen;
      scans.set(view('s1', at === 5_000 ? 'completed' : 'running', emitted, applied));
      await history.tick();
    }
    expect(history.latest()).toBe('s1');
    expect(history.points('s1')).toEqual([
      { at: new Date(2_000).toISOString(), sentPerSecond: 50, resultsPerSecond: 20, commandLag: 30 },
      { at: new Date(3_000).toISOString(), sentPerSecond: 50, resultsPerSecond: 50, commandLag: 30 },
      { at: new Date(5_000).toISOString(), sentPerSecond: 0, resultsPerSecond: 15, commandLag: 0 },
    ]);

    // Finished: no more samples for it; the next running scan is followed, s1's history kept.
    now = 6_000;
    await history.tick();
    expect(history.points('s1')).toHaveLength(3);
    scans.set(view('s2', 'running', 10, 0));
    await history.tick();
    expect(history.latest()).toBe('s2');
    expect(history.points('s1')).toHaveLength(3);
  });

  it('keeps a long scan’s whole run at a coarser step instead of dropping its start', async () => {
    const scans = new FakeScans();
    let now = 0;
    const history = new ScanRateHistory(
      scans,
      async () => null,
      () => now,
    );
    for (let i = 0; i <= 1_000; i++) {
      now = i * 1_000;
      scans.set(view('long', 'running', i * 10, i * 10));
      await history.tick();
    }
    const points = history.points('long');
    expect(points.length).toBeLessThanOrEqual(600);
    expect(points.at(-1)!.at).toBe(new Date(1_000_000).toISOString());
    // The first interval still starts at the scan's first sample (t = 0), a few seconds wide now.
    expect(Date.parse(points[0]!.at)).toBeLessThanOrEqual(10_000);
    for (const p of points) expect(p).toMatchObject({ sentPerSecond: 10, resultsPerSecond: 10, commandLag: null });
  });
});

describe('GET /status (the status page’s data)', () => {
  let app: FastifyInstance;
  let base: string;
  let lagSource: () => Promise<number>;
  const scans = new FakeScans();

  beforeAll(async () => {
    const service: ScanService = {
      create: () => {
        throw new Error('not used');
      },
      list: (limit, offset) => scans.list(limit, offset),
      get: (id) => scans.get(id),
      cancel: async () => {
        throw new Error('not used');
      },
    };
    app = buildApp({
      scans: service,
      replica: {
        ready: true,
        lag: () => [
          { partition: 0, lag: 3 },
          { partition: 1, lag: 0 },
        ],
      },
      metrics: createScannerMetrics(),
      logger: createLogger('silent'),
      apiToken: TOKEN,
      maxBodyBytes: 4_096,
      commandLag: { lag: () => lagSource() },
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app.close());

  const get = async (path: string, headers: Record<string, string> = auth) => {
    const res = await fetch(`${base}${path}`, { headers });
    return { status: res.status, headers: res.headers, json: (await res.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };

  it('needs the bearer token: 401 in the API’s error shape', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-token-0123456789' },
      { authorization: `Basic ${TOKEN}` },
    ]) {
      const res = await get('/status', headers);
      expect(res.status).toBe(401);
      expect(res.json.error).toBe('unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(JSON.stringify(res.json)).not.toContain(TOKEN);
    }
  });

  it('gives the command lag, the replica lag per partition and the running scan’s series', async () => {
    lagSource = async () => 42;
    let emitted = 0;
    scans.set(view('running-1', 'running', 0, 0));
    // The sampler runs once a second on its own; move the scan on until it has two intervals.
    const body = await waitUntil(
      async () => {
        emitted += 25;
        scans.set(view('running-1', 'running', emitted, emitted - 5));
        const res = await get('/status');
        return res.json.chart.points.length >= 2 && res.json;
      },
      { timeoutMs: 15_000, intervalMs: 500, message: 'two chart points' },
    );
    expect(body.commandLag).toBe(42);
    expect(body.replicaLag).toEqual({
      total: 3,
      partitions: [
        { partition: 0, lag: 3 },
        { partition: 1, lag: 0 },
      ],
    });
    expect(body.chart.scanId).toBe('running-1');
    expect(body.chart.sampleSeconds).toBe(1);
    expect(body.chart.points.some((p: { sentPerSecond: number }) => p.sentPerSecond > 0)).toBe(true);
    expect(body.chart.points[0]).toMatchObject({ commandLag: 42 });
    // Asking for it by id gives the same series.
    const byId = await get('/status?scan=running-1');
    expect(byId.json.chart.scanId).toBe('running-1');
    expect(byId.json.chart.points.length).toBeGreaterThanOrEqual(2);
  });

  it('a scan it never sampled has an empty series; an unknown one is a 404; an unknown query key a 400', async () => {
    scans.set(view('old-1', 'completed', 10, 10));
    expect((await get('/status?scan=old-1')).json.chart).toEqual({ scanId: 'old-1', sampleSeconds: 1, points: [] });
    const missing = await get('/status?scan=nope');
    expect([missing.status, missing.json.error]).toEqual([404, 'scan_not_found']);
    const bad = await get('/status?scans=x');
    expect(bad.status).toBe(400);
    expect(bad.json.issues[0].path).toBe('/querystring/scans');
  });

  it('reports the command lag as null when Kafka does not answer', async () => {
    lagSource = async () => {
      throw new Error('The admin client is not connected');
    };
    expect((await get('/status')).json.commandLag).toBeNull();
  });

  it('is in the OpenAPI document, behind the bearer scheme', async () => {
    const doc = (await get('/openapi.json', {})).json;
    expect(doc.paths['/status'].get.security).toEqual([{ bearerAuth: [] }]);
  });
});

describe('GET /status: the processors (PROCESSOR_URLS), read by the scanner once a second', () => {
  it('serves each processor’s status and series; one that is down shows as unreachable and breaks nothing', async () => {
    const { createServer } = await import('node:http');
    let applied = 0;
    const processor = createServer((req, res) => {
      const ok = req.url === '/status' && req.headers.authorization === 'Bearer processor-token-0123456789';
      applied += 20;
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          at: new Date().toISOString(),
          instanceId: 'p-1',
          ready: true,
          tasks: [{ task: 0, state: 'RUNNING' }],
          restores: { inProgress: [], last: [{ task: 0, restored: 9, ms: 40, finishedAt: 'x', ok: true }] },
          commitLatency: { windowSeconds: 10, count: 4, p50Ms: 11.5, p99Ms: 40 },
          commands: { applied },
          events: {},
          deadLetters: { total: 0, byCode: {} },
          consumerLag: null,
        }),
      );
    });
    await new Promise<void>((res) => processor.listen(0, '127.0.0.1', res));
    const { port } = processor.address() as { port: number };
    const closed = createServer();
    await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
    const { port: closedPort } = closed.address() as { port: number };
    await new Promise((res) => closed.close(res)); // nothing listens there any more

    const app = buildApp({
      scans: { list: () => ({ scans: [], total: 0 }), get: () => view('x', 'completed', 0, 0) } as never,
      replica: { ready: true, lag: () => [] },
      metrics: createScannerMetrics(),
      logger: createLogger('silent'),
      apiToken: TOKEN,
      maxBodyBytes: 4_096,
      processors: {
        urls: [`http://127.0.0.1:${port}`, `http://127.0.0.1:${closedPort}`],
        token: 'processor-token-0123456789',
      },
    });
    try {
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      const body = await waitUntil(
        async () => {
          const res = await fetch(`${base}/status`, { headers: auth });
          const json = (await res.json()) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
          return res.status === 200 && json.processors.instances[0].points.length >= 2 && json;
        },
        { timeoutMs: 15_000, intervalMs: 250, message: 'two processor points' },
      );
      const [up, down] = body.processors.instances;
      expect(body.processors.sampleSeconds).toBe(1);
      expect(up).toMatchObject({ url: `http://127.0.0.1:${port}`, reachable: true, error: null });
      expect(up.status).toMatchObject({ instanceId: 'p-1', commitLatency: { p50Ms: 11.5, p99Ms: 40 } });
      expect(up.points.at(-1).appliedPerSecond).toBeGreaterThan(0);
      expect(down).toMatchObject({ reachable: false, error: 'connection refused', status: null, points: [] });
    } finally {
      await app.close();
      await new Promise((res) => processor.close(res));
    }
  });
});
