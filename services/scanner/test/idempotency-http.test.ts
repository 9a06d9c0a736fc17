import { createHash } from 'node:crypto';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/http/app';
import fc from 'fast-check';
import { digestOf, IdempotencyKeys, MAX_DIGEST_DEPTH } from '../src/http/idempotency';
import { InvalidRequestError } from '../src/errors';
import { createLogger } from '../src/logger';
import { createScannerMetrics } from '../src/metrics';
import { StoreScheduleService } from '../src/schedules/schedule-service';
import { FakeScans, NOW } from './scan-fakes';
import { FakeScanService, tempStores } from './schedule-fakes';

// Idempotency-Key on POST /scans and POST /schedules over real HTTP, the keys in a real
// scans.sqlite: a retry answers with what the first request created, another body is a 409
// naming the key, a refused create leaves no key, keys outlive a restart and expire after the TTL.

const TOKEN = 'test-token-0123456789abcdef';
const TTL = 3_600_000;
const scanBody = { ...DORMANCY_SWEEP, options: { rate: 100 }, asOf: NOW };

describe('Idempotency-Key', () => {
  let stores: ReturnType<typeof tempStores>;
  let scans: FakeScans;
  let now: number;
  let app: FastifyInstance;
  let base: string;

  const start = async () => {
    const keys = new IdempotencyKeys(stores.file, TTL, () => now);
    const scheduleScans = new FakeScanService();
    app = buildApp({
      scans,
      replica: { ready: true, lag: () => [] },
      metrics: createScannerMetrics(),
      logger: createLogger('silent'),
      apiToken: TOKEN,
      maxBodyBytes: 8_192,
      idempotency: keys,
      schedules: new StoreScheduleService({
        store: stores.schedules,
        scans: scheduleScans,
        knownDomainActions: ['mark_dormant'],
        minIntervalMs: 60_000,
        now: () => NOW,
      }),
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  };
  beforeEach(async () => {
    stores = tempStores();
    scans = new FakeScans();
    now = NOW;
    await start();
  });
  afterEach(async () => {
    await app.close();
    stores.close();
  });

  const post = async (url: string, body: unknown, key?: string) => {
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        ...(key !== undefined && { 'idempotency-key': key }),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: (await res.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };

  it('a retry with the same key and body gets the first scan back, and queues nothing more', async () => {
    const first = await post('/scans', scanBody, 'retry-1');
    expect(first).toMatchObject({ status: 202, replayed: null, body: { url: '/scans/scan-1' } });
    // The client never saw that answer (a timeout, a proxy) and sends the request again.
    const again = await post('/scans', scanBody, 'retry-1');
    expect(again).toMatchObject({
      status: 202,
      replayed: 'true',
      body: { url: '/scans/scan-1', scan: { id: 'scan-1' } },
    });
    expect(scans.records.size).toBe(1);
    // Key order in the body does not make it another body.
    const reordered = JSON.stringify({
      asOf: NOW,
      options: { rate: 100 },
      action: DORMANCY_SWEEP.action,
      condition: DORMANCY_SWEEP.condition,
    });
    expect(await post('/scans', reordered, 'retry-1')).toMatchObject({ status: 202, replayed: 'true' });
    // Without a key, or with another one, each request is a scan of its own.
    expect((await post('/scans', scanBody)).body.url).toBe('/scans/scan-2');
    expect((await post('/scans', scanBody, 'retry-2')).body.url).toBe('/scans/scan-3');
  });

  it('the same key with another body is a 409 naming the key; nothing is created', async () => {
    await post('/scans', scanBody, 'reused-key');
    const other = await post('/scans', { ...scanBody, options: { rate: 5 } }, 'reused-key');
    expect(other.status).toBe(409);
    expect(other.body.error).toBe('idempotency_key_conflict');
    expect(other.body.message).toBe(
      `Idempotency-Key "reused-key" was used for POST /scans at ${new Date(NOW).toISOString()} with a different body; send a new key for a different request`,
    );
    expect(scans.records.size).toBe(1);
  });

  it('a create that is refused leaves no key behind: the corrected request with the same key is created', async () => {
    const bad = await post('/scans', { ...scanBody, condition: { field: 'status', op: 'nope', value: 1 } }, 'fix-me');
    expect(bad.status).toBe(400);
    expect(await post('/scans', scanBody, 'fix-me')).toMatchObject({ status: 202, replayed: null });
  });

  it.each([
    ['empty', ''],
    ['with a space', 'two words'],
    ['longer than 255', 'k'.repeat(256)],
    ['not ASCII', 'clé'],
  ])('a key that is %s is a 400 naming the header', async (_what, key) => {
    const res = await post('/scans', scanBody, key);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.message).toMatch(/^\/headers\/idempotency-key: /);
    expect(scans.records.size).toBe(0);
  });

  it('keys outlive a restart, and expire after the TTL', async () => {
    await post('/scans', scanBody, 'durable');
    await app.close();
    await start(); // the same scans.sqlite, a new process
    expect(await post('/scans', scanBody, 'durable')).toMatchObject({
      status: 202,
      replayed: 'true',
      body: { url: '/scans/scan-1' },
    });
    now = NOW + TTL + 1;
    expect(await post('/scans', scanBody, 'durable')).toMatchObject({
      status: 202,
      replayed: null,
      body: { url: '/scans/scan-2' },
    });
  });

  // Issue 34 item 4: a 7 KB body of 3,500 nested arrays was a 500 with a key (the digest recursed
  // without bound before the rules' depth limits) and a 400 without one.
  it('a deeply nested body is the same 400 with a key as without, and on a replayed key; never a 500', async () => {
    const deep = JSON.stringify({
      ...scanBody,
      action: { set: { a: JSON.parse(`${'['.repeat(3_500)}${']'.repeat(3_500)}`) } },
    });
    const without = await post('/scans', deep);
    expect(without.status).toBe(400);
    expect(without.body.issues[0].path).toMatch(/^\/body\/action\/set\/a\//);
    const withKey = await post('/scans', deep, 'deep-1');
    expect(withKey).toMatchObject({ status: 400, body: { error: 'invalid_request', issues: without.body.issues } });
    // The key was answered for a valid body: the deep one is digested before any create.
    await post('/scans', scanBody, 'deep-2');
    const replayed = await post('/scans', deep, 'deep-2');
    expect(replayed.status).toBe(400);
    expect(replayed.body).toMatchObject({
      error: 'invalid_request',
      issues: [{ path: '/body/action/set/a', message: `nested deeper than ${MAX_DIGEST_DEPTH} levels` }],
    });
    const schedule = { name: 'deep', interval: 'PT1H', template: JSON.parse(deep) };
    const scheduleWithKey = await post('/schedules', schedule, 'deep-3');
    expect(scheduleWithKey.status).toBe(400);
    expect(scheduleWithKey.body.error).toBe('invalid_request');
    expect(scans.records.size).toBe(1);
  });

  it('POST /schedules: a retry gets the first schedule, another body is a 409, keys are per route', async () => {
    const schedule = { name: 'nightly', interval: 'PT1H', template: { ...DORMANCY_SWEEP, options: { dryRun: true } } };
    const first = await post('/schedules', schedule, 'sched-1');
    expect(first.status).toBe(201);
    const again = await post('/schedules', schedule, 'sched-1');
    expect(again).toMatchObject({ status: 201, replayed: 'true', body: { id: first.body.id } });
    expect(stores.schedules.list()).toHaveLength(1);
    expect((await post('/schedules', { ...schedule, name: 'other' }, 'sched-1')).status).toBe(409);
    // The same key on the other route is another key.
    expect(await post('/scans', scanBody, 'sched-1')).toMatchObject({ status: 202, replayed: null });
  });
});

describe('digestOf', () => {
  it('ignores key order at every level and tells values apart', () => {
    expect(digestOf({ a: 1, b: { c: [1, { d: 2, e: 3 }] } })).toBe(digestOf({ b: { c: [1, { e: 3, d: 2 }] }, a: 1 }));
    expect(digestOf({ a: 1 })).not.toBe(digestOf({ a: '1' }));
    expect(digestOf([1, 2])).not.toBe(digestOf([2, 1]));
  });

  // Keys stored before the digest became iterative must still match: the same text, byte for byte.
  it('digests exactly as the recursive canonical JSON it replaced', () => {
    const recursive = (value: unknown): string => {
      if (Array.isArray(value)) return `[${value.map(recursive).join(',')}]`;
      if (value !== null && typeof value === 'object') {
        const record = value as Record<string, unknown>;
        const entries = Object.keys(record)
          .sort()
          .filter((k) => record[k] !== undefined)
          .map((k) => `${JSON.stringify(k)}:${recursive(record[k])}`);
        return `{${entries.join(',')}}`;
      }
      return JSON.stringify(value) ?? 'null';
    };
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    fc.assert(
      fc.property(fc.jsonValue(), (v) => digestOf(v) === sha(recursive(v))),
      { numRuns: 500 },
    );
    expect(digestOf({ a: undefined, b: [undefined, 1], c: {} })).toBe(sha('{"b":[null,1],"c":{}}'));
  });

  it('refuses a value deeper than its cap with a 400 naming the field, at any depth without a stack overflow', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const err = (() => {
      try {
        digestOf({ condition: {}, action: { set: { a: deep } } });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).issues).toEqual([
      { path: '/body/action/set/a', message: `nested deeper than ${MAX_DIGEST_DEPTH} levels` },
    ]);
    let fits: unknown = 1;
    for (let i = 0; i < MAX_DIGEST_DEPTH - 1; i++) fits = [fits];
    expect(digestOf({ a: fits })).toMatch(/^[0-9a-f]{64}$/);
  });
});
