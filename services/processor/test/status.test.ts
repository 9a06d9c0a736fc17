import pino from 'pino';
import { buildApp } from '../src/http/app';
import { createProcessorMetrics } from '../src/metrics';
import { CommitLatencyWindow } from '../src/status/commit-latency-window';
import { EventCommitLatency } from '../src/status/event-commit-latency';
import { InputLagProbe } from '../src/status/input-lag';
import { processorStatus, type StatusSources } from '../src/status/processor-status';
import { RestoreProgress } from '../src/status/restore-progress';

// GET /status on the processor: what the scanner's status page shows of an instance, from what
// the processor already tracks (metrics, the lifecycle) plus a recent latency window, restore
// progress and the input lag.

const TOKEN = 'processor-status-token-0123456789';

describe('the event commit latency window', () => {
  it('gives p50 and p99 of the last 10 s, within the buckets’ 4 %', () => {
    const w = new CommitLatencyWindow(10);
    const latencies = Array.from({ length: 1000 }, (_, i) => i + 1); // 1..1000 ms
    w.record(100_000, latencies);
    const p = w.percentiles(100_500);
    expect(p.count).toBe(1000);
    expect(p.p50Ms).toBeGreaterThanOrEqual(500);
    expect(p.p50Ms).toBeLessThanOrEqual(500 * 1.04);
    expect(p.p99Ms).toBeGreaterThanOrEqual(990);
    expect(p.p99Ms).toBeLessThanOrEqual(990 * 1.04);
  });

  it('forgets what was committed before the window, so a slow minute ago does not stay in the p99', () => {
    const w = new CommitLatencyWindow(10);
    w.record(0, [5_000, 5_000, 5_000]);
    w.record(15_000, [10, 10, 10]);
    const p = w.percentiles(15_000);
    expect(p.count).toBe(3);
    expect(p.p99Ms).toBeLessThan(11);
  });

  it('is null with nothing committed in the window, and holds 0 ms and odd values', () => {
    const w = new CommitLatencyWindow(10);
    expect(w.percentiles(1_000)).toEqual({ windowSeconds: 10, count: 0, p50Ms: null, p99Ms: null });
    w.record(1_000, [0, Number.NaN, 1e12]);
    const p = w.percentiles(1_000);
    expect(p.count).toBe(3);
    expect(p.p50Ms).toBe(0.1);
    expect(Number.isFinite(p.p99Ms)).toBe(true);
  });
});

describe('the event commit latency (events only, 3 s)', () => {
  const at = 100_000;

  it('counts the events of each committed unit and never its commands, whose wait on the topic is the sweep’s own', () => {
    const w = new EventCommitLatency('events');
    const inputs = new Map([
      ['events', [at - 20, at - 30, at - 40]],
      ['commands', [at - 5_000, at - 6_000]],
    ]);
    w.observe({ committedAt: at, inputs });
    const p = w.percentiles(at);
    expect(p).toMatchObject({ windowSeconds: 3, count: 3 });
    expect(p.p99Ms).toBeGreaterThanOrEqual(40);
    expect(p.p99Ms).toBeLessThanOrEqual(40 * 1.04);
  });

  it('is null with only commands committed, and forgets a slow second three seconds on', () => {
    const w = new EventCommitLatency('events');
    w.observe({ committedAt: at, inputs: new Map([['commands', [at - 900]]]) });
    expect(w.percentiles(at)).toEqual({ windowSeconds: 3, count: 0, p50Ms: null, p99Ms: null });
    w.observe({ committedAt: at, inputs: new Map([['events', [at - 2_000]]]) });
    expect(w.percentiles(at + 2_000).p99Ms).toBeGreaterThanOrEqual(2_000);
    expect(w.percentiles(at + 3_000).count).toBe(0);
  });
});

describe('restore progress', () => {
  it('counts records restored and offsets to go, then keeps the last finished restore per task', () => {
    let now = 1_000;
    const r = new RestoreProgress(() => now);
    r.begin(2, 100n, 600n);
    r.begin(0, null, 50n);
    r.applied(2, 200, 300n);
    expect(r.view().inProgress).toEqual([
      { task: 0, restored: 0, toGo: 50, startedAt: 1_000 },
      { task: 2, restored: 200, toGo: 300, startedAt: 1_000 },
    ]);
    now = 1_750;
    r.applied(0, 50, 50n);
    r.finish(0, true);
    r.finish(2, false);
    expect(r.view()).toEqual({
      inProgress: [],
      last: [
        { task: 0, restored: 50, ms: 750, finishedAt: 1_750, ok: true },
        { task: 2, restored: 200, ms: 750, finishedAt: 1_750, ok: false },
      ],
    });
    expect(r.view([2]).last.map((d) => d.task)).toEqual([2]); // only the tasks owned now
  });
});

describe('the input lag probe', () => {
  const admin = (committed: Record<string, string[]>, high: string[], delayMs = 0) => ({
    calls: 0,
    async fetchOffsets({ topics }: { topics: string[] }) {
      this.calls++;
      await new Promise((res) => setTimeout(res, delayMs));
      return topics.map((topic) => ({
        topic,
        partitions: (committed[topic] ?? []).map((offset, partition) => ({ partition, offset, metadata: null })),
      }));
    },
    async fetchTopicOffsets() {
      return high.map((h, partition) => ({ partition, offset: h, high: h, low: '0' }));
    },
  });

  it('is end minus committed per partition of both inputs (the log start when nothing is committed)', async () => {
    const fake = admin({ events: ['10', '-1'], commands: ['5', '7'] }, ['12', '4']);
    const probe = new InputLagProbe({ admin: fake as never, groupId: 'g', topics: ['events', 'commands'] });
    expect(await probe.read()).toEqual([
      { topic: 'events', partition: 0, lag: 2 },
      { topic: 'commands', partition: 0, lag: 7 },
      { topic: 'events', partition: 1, lag: 4 },
      { topic: 'commands', partition: 1, lag: 0 },
    ]);
    await probe.read(); // within a second: the same reading
    expect(fake.calls).toBe(1);
  });

  it('is null when Kafka does not answer in time, or fails', async () => {
    const slow = new InputLagProbe({
      admin: admin({}, ['1'], 200) as never,
      groupId: 'g',
      topics: ['events'],
      waitMs: 20,
    });
    expect(await slow.read()).toBeNull();
    const failing = new InputLagProbe({
      admin: { fetchOffsets: () => Promise.reject(new Error('down')), fetchTopicOffsets: async () => [] } as never,
      groupId: 'g',
      topics: ['events'],
    });
    expect(await failing.read()).toBeNull();
  });
});

function sources(overrides: Partial<StatusSources> = {}): StatusSources {
  const metrics = createProcessorMetrics();
  metrics.commands.inc({ outcome: 'applied' }, 40);
  metrics.commands.inc({ outcome: 'condition_false' }, 2);
  metrics.events.inc({ outcome: 'changed' }, 500);
  metrics.deadLetters.inc({ code: 'NOT_JSON' }, 3);
  metrics.deadLetters.inc({ code: 'EVENT_INVALID' }, 1);
  const restores = new RestoreProgress(() => Date.UTC(2026, 11, 1));
  restores.begin(1, 0n, 900n);
  restores.applied(1, 300, 300n);
  const commitLatency = new CommitLatencyWindow();
  commitLatency.record(Date.UTC(2026, 11, 1), [12, 14, 90]);
  const eventCommitLatency = new EventCommitLatency('events');
  eventCommitLatency.observe({
    committedAt: Date.UTC(2026, 11, 1),
    inputs: new Map([['events', [Date.UTC(2026, 11, 1) - 12]]]),
  });
  const states: Record<number, string> = { 0: 'RUNNING', 1: 'RESTORING' };
  return {
    instanceId: 'a1',
    ready: false,
    tasks: { owned: [0, 1], stateOf: (t: number) => states[t] as never },
    restores,
    commitLatency,
    eventCommitLatency,
    metrics,
    inputLag: async () => [
      { topic: 'events', partition: 0, lag: 3 },
      { topic: 'events', partition: 1, lag: 0 },
      { topic: 'events', partition: 2, lag: 9 }, // another instance's
    ],
    now: () => Date.UTC(2026, 11, 1),
    ...overrides,
  };
}

describe('the processor status', () => {
  it('reports tasks by state, restores with records to go, latency, counts and the lag of its own partitions', async () => {
    const s = await processorStatus(sources());
    expect(s).toEqual({
      at: '2026-12-01T00:00:00.000Z',
      instanceId: 'a1',
      ready: false,
      tasks: [
        { task: 0, state: 'RUNNING' },
        { task: 1, state: 'RESTORING' },
      ],
      restores: {
        inProgress: [{ task: 1, restored: 300, toGo: 600, startedAt: '2026-12-01T00:00:00.000Z' }],
        last: [],
      },
      commitLatency: { windowSeconds: 10, count: 3, p50Ms: expect.any(Number), p99Ms: expect.any(Number) },
      eventCommitLatency: { windowSeconds: 3, count: 1, p50Ms: expect.any(Number), p99Ms: expect.any(Number) },
      commands: { applied: 40, condition_false: 2 },
      events: { changed: 500 },
      deadLetters: { total: 4, byCode: { NOT_JSON: 3, EVENT_INVALID: 1 } },
      consumerLag: [
        { topic: 'events', partition: 0, lag: 3 },
        { topic: 'events', partition: 1, lag: 0 },
      ],
    });
    expect(s.commitLatency.p99Ms).toBeGreaterThanOrEqual(90);
  });

  it('says null for the lag when Kafka did not answer', async () => {
    expect((await processorStatus(sources({ inputLag: async () => null }))).consumerLag).toBeNull();
  });
});

describe('processor HTTP: GET /status', () => {
  // On a real port, as http.test.ts does (fastify's inject cannot load under jest here).
  const start = async (auth: 'bearer' | 'off') => {
    const app = buildApp({
      processor: {
        isReady: true,
        tasks: { owned: [0, 1], read: async () => undefined, stateOf: () => 'RUNNING' } as never,
        status: () => processorStatus(sources()),
      },
      metrics: createProcessorMetrics(),
      logger: pino({ level: 'silent' }),
      stateAuth: auth === 'bearer' ? { kind: 'bearer', token: TOKEN } : { kind: 'off' },
    });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const get = async (path: string, token?: string) => {
      const res = await fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
      return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    return { app, get };
  };

  it('answers the status with the token, 401 without, and is in the OpenAPI document', async () => {
    const { app, get } = await start('bearer');
    try {
      const ok = await get('/status', TOKEN);
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ instanceId: 'a1', tasks: [{ task: 0, state: 'RUNNING' }, { task: 1 }] });
      expect(ok.body.deadLetters).toEqual({ total: 4, byCode: { NOT_JSON: 3, EVENT_INVALID: 1 } });
      const denied = await get('/status');
      expect([denied.status, denied.body.error]).toEqual([401, 'unauthorized']);
      expect(JSON.stringify(denied.body)).not.toContain('RESTORING');
      const doc = (await get('/openapi.json')).body;
      expect(doc.paths['/status'].get.security).toEqual([{ bearerAuth: [] }]);
    } finally {
      await app.close();
    }
  });

  it('with STATE_API_AUTH=off it answers without a token, like /state/:key', async () => {
    const { app, get } = await start('off');
    try {
      expect((await get('/status')).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});
