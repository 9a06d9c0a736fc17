import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeStoredEntity, type UpdateCommand } from '@state-relay/contracts';
import { evaluateCondition, parseCondition, type JsonObject } from '@state-relay/rules';
import { ReplicaStore } from '@state-relay/store';
import { waitUntil } from '@state-relay/testkit';
import type { FastifyInstance } from 'fastify';
import { largestConditions, recordsFor } from '../../../packages/rules/test/largest-conditions';
import { buildApp } from '../src/http/app';
import { createLogger } from '../src/logger';
import { createScannerMetrics } from '../src/metrics';
import { ScanEngine, type ScanEngineDeps } from '../src/scans/scan-engine';
import { EngineScanService } from '../src/scans/scan-service';
import type { ScanView } from '../src/scans/scan-view';
import { openScansDatabase, type ScansDatabase } from '../src/scanner';
import { Scheduler } from '../src/schedules/scheduler';
import { StoreScheduleService } from '../src/schedules/schedule-service';

// Issue 34's hostile-client findings against the running scanner: the real app over HTTP, the real
// engine walking a real SQLite replica, the real scans database; only Kafka is a fake (commands are
// answered `applied` as the processor would).

const TOKEN = 'hostile-input-token-Qm7vX2pL9sRt4wKz';
const NOW = Date.UTC(2026, 10, 1);
const ROWS = 300;

describe('scanner against hostile input (real SQLite, HTTP)', () => {
  let dir: string;
  let replica: ReplicaStore;
  let database: ScansDatabase;
  let engine: ScanEngine;
  let app: FastifyInstance;
  let base: string;
  let service: EngineScanService;
  const records = recordsFor(ROWS, NOW) as JsonObject[];
  const sent: UpdateCommand[] = [];

  async function start(overrides: Partial<ScanEngineDeps> = {}): Promise<void> {
    dir = mkdtempSync(join(tmpdir(), 'scanner-hostile-'));
    replica = ReplicaStore.open({ path: join(dir, 'replica.sqlite') });
    replica.apply(
      records.map((value, i) => ({
        partition: i % 4,
        offset: String(Math.floor(i / 4)),
        key: `k-${String(i).padStart(4, '0')}`,
        value: encodeStoredEntity({ version: 1, value, seen: '' }),
      })),
    );
    database = openScansDatabase(join(dir, 'scans.sqlite'));
    const store = database.scans;
    const logger = createLogger('silent');
    const metrics = createScannerMetrics();
    engine = new ScanEngine({
      store,
      replica,
      replicaProgress: { currentEnds: async () => new Map(), waitFor: async () => undefined },
      sink: {
        send: async (commands) => {
          sent.push(...commands);
          store.recordResults(
            commands.map((c) => ({
              commandId: c.commandId,
              scanId: c.scanId,
              key: c.key,
              outcome: 'applied' as const,
              processedAt: NOW,
            })),
          );
          engine.notifyResults();
        },
      },
      commandLag: { lag: async () => 0 },
      metrics,
      logger,
      chunkSize: 100,
      maxCommandLag: 1_000,
      replicaCatchUpTimeoutMs: 1_000,
      knownDomainActions: ['mark_dormant'],
      backoffPollMs: 10,
      pacing: { signal: { latest: () => undefined, baseline: () => null }, defaultBudget: { off: true } },
      ...overrides,
    });
    const scans = (service = new EngineScanService(engine, store, { lag: () => [] }));
    app = buildApp({
      scans,
      replica: { ready: true, lag: () => [] },
      metrics,
      logger,
      apiToken: TOKEN,
      maxBodyBytes: 65_536,
      schedules: new StoreScheduleService({
        store: database.schedules,
        scans,
        knownDomainActions: ['mark_dormant'],
        minIntervalMs: 60_000,
        now: () => NOW,
      }),
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
    engine.start();
  }

  afterEach(async () => {
    await app.close();
    await Promise.race([engine.stop(), new Promise((r) => setTimeout(r, 10_000))]);
    database.close();
    replica.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    sent.length = 0;
  });

  async function call(method: string, url: string, body?: unknown) {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: text === '' ? undefined : JSON.parse(text) };
  }

  const finished = (id: string, timeoutMs = 60_000) =>
    waitUntil(
      async () => {
        const scan = (await call('GET', `/scans/${id}`)).json as ScanView;
        return ['completed', 'cancelled', 'failed'].includes(scan.status) && scan;
      },
      { timeoutMs, intervalMs: 20, message: `scan ${id} to finish` },
    ) as Promise<ScanView>;

  // Issue 34 item 5: `{"any": [996 leaves]}` was accepted, then every scan of it failed with
  // "internal error" (SQLite's expression depth limit, hit by the pre-filter).
  describe('the largest accepted condition of every shape', () => {
    beforeEach(() => start());

    it.each(largestConditions().map((s) => [s.shape, s.n, s.condition] as const))(
      '%s (n = %i): accepted, and the scan completes with every match',
      async (_shape, _n, condition) => {
        const created = await call('POST', '/scans', { condition, action: { set: { swept: true } }, asOf: NOW });
        expect(created.status).toBe(202);
        const done = await finished(created.json.scan.id);
        const c = parseCondition(condition);
        const matching = records.filter((r) => evaluateCondition(c, r, { asOf: NOW })).length;
        expect(done).toMatchObject({ status: 'completed', error: null });
        expect(done.counts).toMatchObject({ scanned: ROWS, matched: matching, emitted: matching });
      },
    );
  });

  it('a schedule whose template is the largest accepted `any`: its run completes (it failed every run)', async () => {
    await start();
    const [largest] = largestConditions();
    const template = { condition: largest!.condition, action: { set: { swept: true } } };
    const created = await call('POST', '/schedules', { name: 'largest', interval: 'PT1H', template });
    expect(created.status).toBe(201);
    // Two hours after the schedule was made: its run is due.
    const logger = createLogger('silent');
    new Scheduler({ store: database.schedules, scans: service, logger, now: () => Date.now() + 7_200_000 }).tick();
    const runs = (await call('GET', `/schedules/${created.json.id}`)).json.lastRuns as Array<{ scanId: string }>;
    expect(runs).toHaveLength(1);
    expect(await finished(runs[0]!.scanId)).toMatchObject({ status: 'completed', error: null });
  });

  // Issue 34 item 6: a 65,490-byte {"set":{"a":[1e999,…]}} (10,900 numbers) was answered with
  // 937,875 bytes of issues.
  describe('validation errors', () => {
    beforeEach(() => start());

    it('list the first 20 issues and count the rest, in a body a fraction of the request', async () => {
      const body = `{"condition":{"field":"f0","op":"exists"},"action":{"set":{"a":[${Array(10_900).fill('1e999').join(',')}]}}}`;
      expect(body.length).toBeLessThan(65_536);
      const res = await call('POST', '/scans', body);
      expect(res.status).toBe(400);
      expect(res.json.error).toBe('invalid_request');
      expect(res.json.issues).toHaveLength(20);
      expect(res.json.issues[0]).toEqual({
        path: '/body/action/set/a/0',
        message: 'expected a finite number, got Infinity',
      });
      expect(res.json.issuesOmitted).toBe(10_880);
      expect(res.json.message).toMatch(/; and 10890 more$/);
      expect(res.text.length).toBeLessThan(4_096);
      // The same for a schedule's template, and nothing was created.
      const schedule = await call('POST', '/schedules', `{"name":"n","interval":"PT1H","template":${body}}`);
      expect(schedule.status).toBe(400);
      expect(schedule.json).toMatchObject({ issuesOmitted: 10_880 });
      expect(schedule.json.issues).toHaveLength(20);
      expect((await call('GET', '/scans')).json.total).toBe(0);
    });

    it('a body with few issues lists them all, with no count', async () => {
      const res = await call('POST', '/scans', { condition: { field: 'f0', op: 'nope' }, action: { set: { a: 1 } } });
      expect(res.status).toBe(400);
      expect(res.json.issues).toHaveLength(1);
      expect(res.json).not.toHaveProperty('issuesOmitted');
    });
  });

  // Issue 34 item 7: a schedule's name was any string up to 200 characters, printed raw by the CLI.
  describe('schedule names', () => {
    beforeEach(() => start());
    const template = { condition: { field: 'f0', op: 'exists' }, action: { set: { a: 1 } } };

    it.each([
      ['ESC (a cursor move)', '\u001b[1A\u001b[2Khidden', 'U+001B at index 0'],
      ['a newline', 'two\nlines', 'U+000A at index 3'],
      ['a C1 CSI', 'x\u009b2J', 'U+009B at index 1'],
      ['a bidi override', 'abc\u202etxt.exe', 'U+202E at index 3'],
    ])('a name with %s is a 400 naming /body/name, on create and on rename', async (_what, name, found) => {
      const created = await call('POST', '/schedules', { name, interval: 'PT1H', template });
      expect(created.status).toBe(400);
      expect(created.json).toEqual({
        error: 'invalid_request',
        message: expect.stringContaining('/body/name: must not contain control'),
        issues: [{ path: '/body/name', message: expect.stringContaining(found) }],
      });
      const ok = await call('POST', '/schedules', { name: 'nightly ✓ (Zürich)', interval: 'PT1H', template });
      expect(ok.status).toBe(201);
      const renamed = await call('PATCH', `/schedules/${ok.json.id}`, { name });
      expect(renamed.status).toBe(400);
      expect(renamed.json.issues).toEqual([{ path: '/body/name', message: expect.stringContaining(found) }]);
      expect((await call('GET', `/schedules/${ok.json.id}`)).json.name).toBe('nightly ✓ (Zürich)');
    });
  });

  // Issue 34 item 8: a scan at rate 0.001 over many keys held the one-at-a-time queue for days.
  describe('maximum duration', () => {
    const slow = (options: Record<string, unknown>) => ({
      condition: { field: 'f0', op: 'exists' },
      action: { set: { swept: true } },
      options: { rate: 0.001, ...options },
    });

    it('options.maxDuration: the scan ends failed saying so, and the next scan in the queue runs', async () => {
      await start();
      const created = await call('POST', '/scans', slow({ maxDuration: 'PT2S' }));
      expect(created.status).toBe(202);
      const next = await call('POST', '/scans', {
        condition: { field: 'f0', op: 'exists' },
        action: { set: { a: 1 } },
      });
      const started = Date.now();
      const done = await finished(created.json.scan.id, 30_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
      expect(done.status).toBe('failed');
      expect(done.error).toMatch(
        /^the scan ran longer than its maximum duration, 2 s \(options\.maxDuration\), and was stopped after scanning \d+ keys and emitting \d+ commands$/,
      );
      expect(done.options.maxDuration).toBe('PT2S');
      expect((await finished(next.json.scan.id)).status).toBe('completed');
    });

    it('without the option, the service default (SCAN_MAX_DURATION_MS) applies', async () => {
      await start({ maxDurationMs: 1_500 });
      const created = await call('POST', '/scans', slow({}));
      const done = await finished(created.json.scan.id, 30_000);
      expect(done).toMatchObject({ status: 'failed', error: expect.stringContaining('1.5 s (SCAN_MAX_DURATION_MS)') });
      // The option overrides the default, longer as well as shorter: this one is cancelled while it runs.
      const longer = await call('POST', '/scans', slow({ maxDuration: 'PT1H' }));
      await new Promise((r) => setTimeout(r, 2_500));
      expect((await call('GET', `/scans/${longer.json.scan.id}`)).json.status).toBe('running');
      expect((await call('POST', `/scans/${longer.json.scan.id}/cancel`)).json.status).toBe('cancelled');
    });

    it.each([
      ['PT0S', 'must be from PT1S to P366D'],
      ['P367D', 'must be from PT1S to P366D'],
      ['soon', 'ISO-8601 duration'],
    ])('maxDuration %j is a 400 naming the field', async (maxDuration, message) => {
      await start();
      for (const [url, body, path] of [
        ['/scans', slow({ maxDuration }), '/body/options/maxDuration'],
        [
          '/schedules',
          { name: 'n', interval: 'PT1H', template: slow({ maxDuration }) },
          '/body/template/options/maxDuration',
        ],
      ] as const) {
        const res = await call('POST', url, body);
        expect(res.status).toBe(400);
        expect(res.json.issues).toEqual([{ path, message: expect.stringContaining(message) }]);
      }
      const wrongType = await call('POST', '/scans', slow({ maxDuration: 3_600_000 }));
      expect(wrongType.status).toBe(400);
      expect(wrongType.json.issues[0].path).toBe('/body/options/maxDuration');
    });
  });
});
