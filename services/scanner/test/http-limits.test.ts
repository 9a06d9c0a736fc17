import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/http/app';
import { createLogger } from '../src/logger';
import { createScannerMetrics } from '../src/metrics';
import { ScanEngine } from '../src/scans/scan-engine';
import { MAX_COMMAND_RECORD_BYTES } from '../src/scans/scan-plan';
import { EngineScanService } from '../src/scans/scan-service';
import { openScansDatabase, type ScansDatabase } from '../src/scanner';
import { StoreScheduleService } from '../src/schedules/schedule-service';

const TOKEN = 'test-token-0123456789abcdef';
const NOW = Date.UTC(2026, 10, 1);
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const MAX_ACTIVE_SCANS = 3;
const MAX_SCHEDULES = 2;

/**
 * The API's limits against the real scan and schedule services over a real scans database (the
 * engine only queues: scans stay pending).
 */
describe('scanner HTTP limits', () => {
  let app: FastifyInstance;
  let base: string;
  let dir: string;
  let database: ScansDatabase;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scanner-http-limits-'));
    database = openScansDatabase(join(dir, 'scans.sqlite'));
    const store = database.scans;
    const logger = createLogger('silent');
    const metrics = createScannerMetrics();
    const engine = new ScanEngine({
      store,
      replica: { chunk: () => ({ rows: [], lastKey: null, walked: 0 }), path: join(dir, 'replica.sqlite') },
      replicaProgress: { currentEnds: async () => new Map(), waitFor: async () => undefined },
      sink: { send: async () => undefined },
      commandLag: { lag: async () => 0 },
      metrics,
      logger,
      chunkSize: 100,
      maxCommandLag: 1_000,
      replicaCatchUpTimeoutMs: 1_000,
      knownDomainActions: ['mark_dormant'],
      maxActiveScans: MAX_ACTIVE_SCANS,
      now: () => NOW,
    });
    const scans = new EngineScanService(engine, store, { lag: () => [] }, () => NOW);
    app = buildApp({
      scans,
      replica: { ready: true, lag: () => [] },
      metrics,
      logger,
      apiToken: TOKEN,
      maxBodyBytes: 4 * 1024 * 1024,
      schedules: new StoreScheduleService({
        store: database.schedules,
        scans,
        knownDomainActions: ['mark_dormant'],
        minIntervalMs: 60_000,
        maxSchedules: MAX_SCHEDULES,
        now: () => NOW,
      }),
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterEach(async () => {
    await app.close();
    database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Inject cannot load here (light-my-request's ESM cookie module under jest): real requests instead. */
  async function call(method: string, url: string, body?: unknown) {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: body === undefined ? { authorization: headers.authorization } : headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { statusCode: res.status, json: () => (text === '' ? undefined : JSON.parse(text)) };
  }
  const post = (url: string, body?: unknown) => call('POST', url, body);
  const schedule = (name: string, template: unknown = DORMANCY_SWEEP) => ({ name, interval: 'PT1H', template });
  const tooLarge = { set: { note: 'x'.repeat(MAX_COMMAND_RECORD_BYTES) } };

  it('a scan whose command could never fit in one record of the commands topic gets 400 naming the action', async () => {
    const res = await post('/scans', { condition: DORMANCY_SWEEP.condition, action: tooLarge });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'invalid_request',
      message: expect.stringContaining('/body/action'),
      issues: [{ path: '/body/action', message: expect.stringContaining(`${MAX_COMMAND_RECORD_BYTES} bytes`) }],
    });
    // One that fits, within the same body limit, is accepted.
    const fits = await post('/scans', {
      condition: DORMANCY_SWEEP.condition,
      action: { set: { note: 'x'.repeat(60_000) } },
    });
    expect(fits.statusCode).toBe(202);
  });

  it('a schedule whose scans’ command could never fit gets 400 naming the template’s action', async () => {
    const res = await post('/schedules', schedule('big', { condition: DORMANCY_SWEEP.condition, action: tooLarge }));
    expect(res.statusCode).toBe(400);
    expect(res.json().issues).toEqual([{ path: '/body/template/action', message: expect.any(String) }]);
  });

  it('past MAX_ACTIVE_SCANS pending or running scans, a new scan gets 429 too_many_scans naming the limit', async () => {
    for (let i = 0; i < MAX_ACTIVE_SCANS; i++) expect((await post('/scans', DORMANCY_SWEEP)).statusCode).toBe(202);
    const res = await post('/scans', DORMANCY_SWEEP);
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({
      error: 'too_many_scans',
      message: expect.stringContaining(`${MAX_ACTIVE_SCANS} pending or running scans, the limit (MAX_ACTIVE_SCANS)`),
    });
    // A cancelled (finished) scan frees its place.
    const [first] = (await call('GET', '/scans')).json().scans;
    expect((await post(`/scans/${first.id}/cancel`)).statusCode).toBe(200);
    expect((await post('/scans', DORMANCY_SWEEP)).statusCode).toBe(202);
  });

  it('past MAX_SCHEDULES schedules, a new schedule gets 409 too_many_schedules naming the limit', async () => {
    for (let i = 0; i < MAX_SCHEDULES; i++) expect((await post('/schedules', schedule(`s${i}`))).statusCode).toBe(201);
    const res = await post('/schedules', schedule('one more'));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      error: 'too_many_schedules',
      message: expect.stringContaining(`${MAX_SCHEDULES} schedules, the limit (MAX_SCHEDULES)`),
    });
    const [first] = (await call('GET', '/schedules')).json().schedules;
    expect((await call('DELETE', `/schedules/${first.id}`)).statusCode).toBe(204);
    expect((await post('/schedules', schedule('one more'))).statusCode).toBe(201);
  });
});
