import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import type { FastifyInstance } from 'fastify';
import fc from 'fast-check';
import { buildApp } from '../src/http/app';
import { createLogger } from '../src/logger';
import { createScannerMetrics } from '../src/metrics';
import { ScanEngine } from '../src/scans/scan-engine';
import { EngineScanService } from '../src/scans/scan-service';
import { openScansDatabase, type ScansDatabase } from '../src/scanner';
import { StoreScheduleService } from '../src/schedules/schedule-service';

const TOKEN = 'test-token-0123456789abcdef';
const NOW = Date.UTC(2026, 10, 1);
const auth = { authorization: `Bearer ${TOKEN}` };
const RESERVED = ['constructor', 'prototype', '__proto__'] as const;

/** The canonical sweep as JSON text, with `extra` (raw JSON members) spliced in where marked. */
const sweep = (top = '', options = '', condition = '') =>
  `{${top}"condition":{"all":[{"field":"status","op":"eq","value":"active"${condition}},` +
  `{"field":"lastActiveAt","op":"lt","value":{"$ago":"P30D"}}]},` +
  `"action":{"domain":"mark_dormant"},"options":{${options}"dryRun":true}}`;

/**
 * The API's input rules against a started app over the real scan and schedule services (the scans
 * database is real; the engine only queues, it is not started). Raw JSON text is sent, since a
 * JavaScript object literal cannot even hold a `__proto__` key.
 */
describe('scanner HTTP input: date-times and reserved keys', () => {
  let app: FastifyInstance;
  let base: string;
  let dir: string;
  let database: ScansDatabase;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scanner-http-input-'));
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
      now: () => NOW,
    });
    const scans = new EngineScanService(engine, store, { lag: () => [] }, () => NOW);
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

  async function send(method: string, url: string, text: string) {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { ...auth, 'content-type': 'application/json' },
      body: text,
    });
    const body = await res.text();
    return { status: res.status, json: JSON.parse(body) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }
  const post = (url: string, body: unknown) => send('POST', url, JSON.stringify(body));

  describe('every date-time is a real calendar instant, judged by the events decoder’s rule', () => {
    it.each([
      ['a 30th of February', '2026-02-30T00:00:00Z'],
      ['a 31st of April with an offset', '2026-04-31T12:00:00+02:00'],
      ['a 29th of February outside a leap year', '2027-02-29T00:00:00Z'],
      ['hour 24', '2026-04-30T24:00:00Z'],
      ['a leap second', '2026-06-30T23:59:60Z'],
      ['month 13', '2026-13-01T00:00:00Z'],
      ['a time without a zone', '2026-04-30T12:00:00'],
      ['an offset beyond 23 hours', '2026-04-30T12:00:00+24:00'],
      ['a date before 1970', '1969-12-31T23:59:59Z'],
    ])('refuses %s as asOf with 400 naming /body/asOf', async (_what, asOf) => {
      const before = database.scans.count();
      const res = await post('/scans', { ...DORMANCY_SWEEP, asOf });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ error: 'invalid_request', issues: [{ path: '/body/asOf' }] });
      expect(res.json.message).toContain('/body/asOf');
      expect(database.scans.count()).toBe(before);
    });

    it.each([
      ['2026-04-30T12:00:00+02:00', '2026-04-30T10:00:00.000Z'],
      ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
      ['2026-11-01T00:00:00.5-01:30', '2026-11-01T01:30:00.500Z'],
    ])('accepts the real instant %s and reads it back as %s', async (asOf, iso) => {
      const res = await post('/scans', { ...DORMANCY_SWEEP, asOf });
      expect(res.status).toBe(202);
      expect(res.json.scan.asOf).toBe(iso);
    });
  });

  describe('a reserved key is an unknown property like any other, never invalid JSON', () => {
    it.each(RESERVED)('POST /scans with a top-level %s key', async (key) => {
      const res = await send('POST', '/scans', sweep(`"${key}":{"prototype":{"x":1}},`));
      expect(res.status).toBe(400);
      expect(res.json).toEqual({
        error: 'invalid_request',
        message: `/body/${key}: unknown property "${key}"`,
        issues: [{ path: `/body/${key}`, message: `unknown property "${key}"` }],
      });
    });

    it.each(RESERVED)('POST /scans with %s among the options', async (key) => {
      const res = await send('POST', '/scans', sweep('', `"${key}":{"prototype":{"x":1}},`));
      expect(res.status).toBe(400);
      expect(res.json.issues).toEqual([{ path: `/body/options/${key}`, message: `unknown property "${key}"` }]);
    });

    it.each(RESERVED)('POST /scans with %s inside a condition gets the same answer as any unknown key', async (key) => {
      const reserved = await send('POST', '/scans', sweep('', '', `,"${key}":{"prototype":{"x":1}}`));
      const ordinary = await send('POST', '/scans', sweep('', '', ',"zzz":{"prototype":{"x":1}}'));
      expect(ordinary.status).toBe(400);
      expect(reserved.status).toBe(400);
      expect(reserved.json.issues).toEqual(
        ordinary.json.issues.map((i: { path: string; message: string }) => ({
          path: i.path.replace('zzz', key),
          message: i.message.replace('zzz', key),
        })),
      );
    });

    it.each(RESERVED)('POST /schedules with %s at the top, in the template and in its options', async (key) => {
      const template = (inner = '', options = '') =>
        `{${inner}"condition":{"field":"status","op":"eq","value":"active"},"action":{"domain":"mark_dormant"},` +
        `"options":{${options}"dryRun":true}}`;
      for (const [text, path] of [
        [`{"${key}":{},"name":"n","interval":"PT1H","template":${template()}}`, `/body/${key}`],
        [
          `{"name":"n","interval":"PT1H","template":${template(`"${key}":{"prototype":{}},`)}}`,
          `/body/template/${key}`,
        ],
        [
          `{"name":"n","interval":"PT1H","template":${template('', `"${key}":{"prototype":{}},`)}}`,
          `/body/template/options/${key}`,
        ],
      ] as const) {
        const res = await send('POST', '/schedules', text);
        expect([path, res.status, res.json.issues]).toEqual([
          path,
          400,
          [{ path, message: `unknown property "${key}"` }],
        ]);
      }
    });

    it.each(RESERVED)('PATCH /schedules/:id with a %s key', async (key) => {
      const res = await send('PATCH', '/schedules/some-id', `{"paused":true,"${key}":{"x":1}}`);
      expect(res.status).toBe(400);
      expect(res.json.issues).toEqual([{ path: `/body/${key}`, message: `unknown property "${key}"` }]);
    });

    it('a reserved key inside a condition value is refused by the rules, naming the field', async () => {
      const text = sweep('').replace('"value":"active"', '"value":{"__proto__":{"polluted":true}}');
      const res = await send('POST', '/scans', text);
      expect(res.status).toBe(400);
      expect(res.json.error).toBe('invalid_request');
      expect(res.json.issues[0].path).toMatch(/^\/body\/condition\/all\/0\/value/);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('any valid JSON body gets a schema or rules answer, never invalid_json or a 5xx', async () => {
      const key = fc.oneof(fc.constantFrom(...RESERVED, 'condition', 'action', 'options', 'asOf'), fc.string());
      const { value } = fc.letrec<{ value: string }>((tie) => ({
        value: fc.oneof(
          { depthSize: 'small', withCrossShrink: true },
          fc.constantFrom('null', 'true', '0', '-1.5', '"x"'),
          fc.string().map((s) => JSON.stringify(s)),
          fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
          fc
            .array(fc.tuple(key, tie('value')), { maxLength: 4 })
            .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
        ),
      }));
      await fc.assert(
        fc.asyncProperty(value, fc.constantFrom('/scans', '/schedules'), async (text, url) => {
          JSON.parse(text); // the generator only makes valid JSON
          const res = await send('POST', url, text);
          expect(res.json.error).not.toBe('invalid_json');
          expect(res.status).toBeLessThan(500);
        }),
        { numRuns: 150 },
      );
    });

    it('malformed JSON is still invalid_json', async () => {
      const res = await send('POST', '/scans', '{"condition":');
      expect([res.status, res.json.error]).toEqual([400, 'invalid_json']);
    });
  });
});
