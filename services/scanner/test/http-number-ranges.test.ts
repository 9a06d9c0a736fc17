import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { RULE_LIMITS } from '@state-relay/rules';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/http/app';
import { NUMBER_RANGES } from '../src/http/schemas';
import { createLogger } from '../src/logger';
import { createScannerMetrics } from '../src/metrics';
import { ScanEngine } from '../src/scans/scan-engine';
import { EngineScanService } from '../src/scans/scan-service';
import { openScansDatabase, type ScansDatabase } from '../src/scanner';
import { StoreScheduleService } from '../src/schedules/schedule-service';

const TOKEN = 'test-token-0123456789abcdef';
const NOW = Date.UTC(2026, 10, 1);
const LAST_INSTANT = '9999-12-31T23:59:59.999Z';
const schedule = (options: object) => ({
  name: 'n',
  interval: 'PT1H',
  template: { condition: DORMANCY_SWEEP.condition, action: DORMANCY_SWEEP.action, options },
});
const ago = (duration: string) => ({
  ...DORMANCY_SWEEP,
  condition: { field: 'lastActiveAt', op: 'lt', value: { $ago: duration } },
});

/**
 * Every number a request carries has a range, and a value outside it is a 400 naming the field,
 * never a stored scan that a later read cannot render. Real scan and schedule services over a real
 * scans database (the engine only queues), driven over a socket.
 */
describe('scanner HTTP input: number ranges', () => {
  let app: FastifyInstance;
  let base: string;
  let dir: string;
  let database: ScansDatabase;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scanner-number-ranges-'));
    database = openScansDatabase(join(dir, 'scans.sqlite'));
    const logger = createLogger('silent');
    const metrics = createScannerMetrics();
    const engine = new ScanEngine({
      store: database.scans,
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
      now: () => NOW,
    });
    const scans = new EngineScanService(engine, database.scans, { lag: () => [] }, () => NOW);
    app = buildApp({
      scans,
      replica: { ready: true, lag: () => [] },
      metrics,
      logger,
      apiToken: TOKEN,
      maxBodyBytes: 8_192,
      schedules: new StoreScheduleService({
        store: database.schedules,
        scans,
        knownDomainActions: ['mark_dormant'],
        minIntervalMs: 60_000,
        now: () => NOW,
      }),
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app.close();
    database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function call(method: string, url: string, body?: unknown) {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  it.each([
    [
      'asOf past what a Date can hold (9e15, a safe integer)',
      '/scans',
      { ...DORMANCY_SWEEP, asOf: 9e15 },
      '/body/asOf',
    ],
    ['asOf past the safe integers (1e16)', '/scans', { ...DORMANCY_SWEEP, asOf: 1e16 }, '/body/asOf'],
    [
      'asOf one ms past the year 9999',
      '/scans',
      { ...DORMANCY_SWEEP, asOf: NUMBER_RANGES.asOf.maximum + 1 },
      '/body/asOf',
    ],
    ['asOf before 1970', '/scans', { ...DORMANCY_SWEEP, asOf: -1 }, '/body/asOf'],
    ['an ISO asOf past 9999 in UTC', '/scans', { ...DORMANCY_SWEEP, asOf: '9999-12-31T23:00:00-01:00' }, '/body/asOf'],
    [
      'a rate so small it waits days per command',
      '/scans',
      { ...DORMANCY_SWEEP, options: { rate: 1e-7 } },
      '/body/options/rate',
    ],
    ['a rate above the maximum', '/scans', { ...DORMANCY_SWEEP, options: { rate: 1_000_001 } }, '/body/options/rate'],
    [
      'a batchSize above the maximum',
      '/scans',
      { ...DORMANCY_SWEEP, options: { batchSize: 100_001 } },
      '/body/options/batchSize',
    ],
    [
      'a maxCommands above the maximum',
      '/scans',
      { ...DORMANCY_SWEEP, options: { maxCommands: 1e12 } },
      '/body/options/maxCommands',
    ],
    [
      'a $ago past the longest duration',
      '/scans',
      ago(`P${RULE_LIMITS.maxDurationDays + 1}D`),
      '/body/condition/value/$ago',
    ],
    [
      'a latency budget ratio below 1.05 (noise would read as a breach)',
      '/scans',
      { ...DORMANCY_SWEEP, options: { latencyBudget: { ratio: 1 } } },
      '/body/options/latencyBudget/ratio',
    ],
    [
      'a latency budget p99Ms above ten minutes',
      '/scans',
      { ...DORMANCY_SWEEP, options: { latencyBudget: { p99Ms: 600_001 } } },
      '/body/options/latencyBudget/p99Ms',
    ],
    [
      'a latency budget in unknown units',
      '/scans',
      { ...DORMANCY_SWEEP, options: { latencyBudget: { p99: 300 } } },
      '/body/options/latencyBudget/p99',
    ],
    [
      'a latency budget that is both a ratio and milliseconds',
      '/scans',
      { ...DORMANCY_SWEEP, options: { latencyBudget: { ratio: 1.3, p99Ms: 300 } } },
      '/body/options/latencyBudget',
    ],
    [
      'an empty latency budget',
      '/scans',
      { ...DORMANCY_SWEEP, options: { latencyBudget: {} } },
      '/body/options/latencyBudget',
    ],
    [
      'a latency budget off: false (off is only ever true)',
      '/scans',
      { ...DORMANCY_SWEEP, options: { latencyBudget: { off: false } } },
      '/body/options/latencyBudget/off',
    ],
    [
      'a template latency budget with two values',
      '/schedules',
      schedule({ latencyBudget: { ratio: 2, off: true } }),
      '/body/template/options/latencyBudget',
    ],
    ['a template rate so small it waits days', '/schedules', schedule({ rate: 1e-7 }), '/body/template/options/rate'],
    [
      'a template maxCommands above the maximum',
      '/schedules',
      schedule({ maxCommands: 1e12 }),
      '/body/template/options/maxCommands',
    ],
  ])('refuses %s with 400 naming the field', async (_what, url, body, path) => {
    const before = [database.scans.count(), database.schedules.list().length];
    const res = await call('POST', url, body);
    expect([res.status, res.json.error]).toEqual([400, 'invalid_request']);
    expect(res.json.issues.map((i: { path: string }) => i.path)).toEqual([path]);
    expect(res.json.message).toContain(path);
    expect([database.scans.count(), database.schedules.list().length]).toEqual(before);
  });

  it('says the bounds of a number in the message', async () => {
    expect((await call('POST', '/scans', { ...DORMANCY_SWEEP, asOf: 9e15 })).json.message).toBe(
      '/body/asOf: does not match any of the allowed types: must be string, or must be <= 253402300799999',
    );
    expect((await call('POST', '/scans', { ...DORMANCY_SWEEP, options: { rate: 1e-7 } })).json.message).toBe(
      '/body/options/rate: does not match any of the allowed types: must be 0, or must be >= 0.001',
    );
  });

  it('says what a latency budget must be', async () => {
    const two = await call('POST', '/scans', {
      ...DORMANCY_SWEEP,
      options: { latencyBudget: { ratio: 1.3, p99Ms: 300 } },
    });
    expect(two.json.message).toBe('/body/options/latencyBudget: give exactly one of p99Ms, ratio or off (got 2)');
    const low = await call('POST', '/scans', { ...DORMANCY_SWEEP, options: { latencyBudget: { ratio: 0.9 } } });
    expect(low.json.message).toBe('/body/options/latencyBudget/ratio: must be >= 1.05');
  });

  it.each([
    ['limit=101', '/querystring/limit'],
    ['limit=0', '/querystring/limit'],
    ['offset=1000000001', '/querystring/offset'],
  ])('GET /scans?%s is a 400 naming %s', async (query, path) => {
    const res = await call('GET', `/scans?${query}`);
    expect([res.status, res.json.issues]).toEqual([400, [{ path, message: expect.any(String) }]]);
  });

  it('accepts every boundary value, and GET /scans, GET /scans/:id still answer 200 after them', async () => {
    const { minimum: rateMin, maximum: rateMax } = NUMBER_RANGES.rate;
    const bodies = [
      { ...DORMANCY_SWEEP, asOf: NUMBER_RANGES.asOf.maximum, options: { rate: rateMin, maxCommands: 1e9 } },
      { ...DORMANCY_SWEEP, asOf: LAST_INSTANT, options: { rate: rateMax, batchSize: 100_000 } },
      { ...DORMANCY_SWEEP, asOf: 0, options: { rate: 0 } },
      { ...DORMANCY_SWEEP, options: { latencyBudget: { ratio: NUMBER_RANGES.latencyBudgetRatio.minimum } } },
      { ...DORMANCY_SWEEP, options: { latencyBudget: { p99Ms: NUMBER_RANGES.latencyBudgetP99Ms.maximum } } },
      { ...DORMANCY_SWEEP, options: { latencyBudget: { off: true } } },
      { ...ago(`P${RULE_LIMITS.maxDurationDays}D`), asOf: 0 },
    ];
    const ids: string[] = [];
    for (const body of bodies) {
      const res = await call('POST', '/scans', body);
      expect(res.status).toBe(202);
      ids.push(res.json.scan.id);
    }
    const list = await call('GET', '/scans?limit=100&offset=0');
    expect(list.status).toBe(200);
    const asOf = new Map(list.json.scans.map((s: { id: string; asOf: string }) => [s.id, s.asOf]));
    expect(ids.map((id) => asOf.get(id))).toEqual([
      LAST_INSTANT,
      LAST_INSTANT,
      '1970-01-01T00:00:00.000Z',
      new Date(NOW).toISOString(),
      new Date(NOW).toISOString(),
      new Date(NOW).toISOString(),
      '1970-01-01T00:00:00.000Z',
    ]);
    for (const id of ids) expect((await call('GET', `/scans/${id}`)).status).toBe(200);
    const far = await call('GET', '/scans?offset=1000000000');
    expect([far.status, far.json.scans]).toEqual([200, []]);
  });

  it('a stored asOf no Date can render (from before its range) still lists: as its epoch ms', async () => {
    const scan = database.scans.create('from-before-the-range', { ...DORMANCY_SWEEP, options: {} }, 1e16, NOW);
    const list = await call('GET', '/scans');
    expect(list.status).toBe(200);
    expect(list.json.scans.find((s: { id: string }) => s.id === scan.id).asOf).toBe('10000000000000000');
    const one = await call('GET', `/scans/${scan.id}`);
    expect([one.status, one.json.asOf]).toEqual([200, '10000000000000000']);
  });

  it('the README’s range table says what the schemas enforce', () => {
    const readme = readFileSync(join(__dirname, '../README.md'), 'utf8');
    const rows: Record<keyof typeof NUMBER_RANGES, string> = {
      asOf: '`asOf` (epoch ms)',
      rate: '`options.rate`',
      batchSize: '`options.batchSize`',
      latencyBudgetP99Ms: '`options.latencyBudget.p99Ms`',
      latencyBudgetRatio: '`options.latencyBudget.ratio`',
      maxCommands: '`options.maxCommands`',
      limit: '`GET /scans?limit`',
      offset: '`GET /scans?offset`',
    };
    for (const [name, { minimum, maximum }] of Object.entries(NUMBER_RANGES)) {
      const row = readme.split('\n').find((line) => line.trim().startsWith(`| ${rows[name as keyof typeof rows]} `));
      expect([name, row]).toEqual([name, expect.stringContaining(`${minimum} … ${maximum}`)]);
    }
  });
});
