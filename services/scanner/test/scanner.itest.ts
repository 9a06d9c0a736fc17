import { execFile, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { accountsOracle, generateAccountEvents } from '@state-relay/accounts/testing';
import { decodeCommand, encodeEvent, type StoredEntity } from '@state-relay/contracts';
import { evaluateCondition, type JsonObject } from '@state-relay/rules';
import { kafkaClient, readTopic, testBrokers, waitUntil } from '@state-relay/testkit';
import Database from 'better-sqlite3';
import type { Kafka } from 'kafkajs';
import {
  changelogState,
  demoEvents,
  newDeployment,
  ProcessorProcess,
  produceEvents,
  STATE_TOKEN,
  waitCaughtUp,
  type Deployment,
} from '../../processor/test/harness';
import type { ScanView } from '../src/scans/scan-view';
import { InProcessScanner, ScannerApi, ScannerProcess, TOKEN } from './scanner-harness';

const AS_OF = Date.UTC(2026, 10, 1); // demoEvents' "now"
const CLI = resolve(__dirname, '../dist/cli/main.js');

/** Runs the built CLI; resolves with its exit code and output (never rejects on a non-zero exit). */
function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}
const DAY = 86_400_000;
const ACCOUNTS = 2_000;

/** One processor deployment seeded with ACCOUNTS demo accounts (30% idle for more than 30 days). */
interface Seeded {
  d: Deployment;
  oracle: Map<string, JsonObject>;
  /** Keys the canonical sweep must turn dormant, sorted. */
  idle: string[];
  before: Map<string, StoredEntity>;
  proc: ProcessorProcess;
}

type Counts = ScanView['counts'];

/** Reads a scan's counts over HTTP, back to back, until it finishes; resolves with every read. */
async function readCountsUntilFinished(api: ScannerApi, id: string) {
  const reads: Array<Pick<Counts, 'emitted' | 'pending' | 'matched'> & { answered: number }> = [];
  for (;;) {
    const scan = await api.get(id);
    const { emitted, pending, matched, results } = scan.counts;
    reads.push({ emitted, pending, matched, answered: Object.values(results).reduce((a, b) => a + b, 0) });
    if (['completed', 'cancelled', 'failed'].includes(scan.status)) return reads;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('scanner against a real broker and the real processor', () => {
  let kafka: Kafka;
  const cleanups: Array<() => Promise<void> | void> = [];

  beforeAll(() => {
    kafka = kafkaClient(testBrokers());
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function seeded(seed: number): Promise<Seeded> {
    const d = newDeployment(testBrokers(), 3);
    const proc = new ProcessorProcess(d);
    cleanups.push(async () => {
      await proc.kill();
      proc.cleanup();
    });
    await proc.start();
    await proc.waitReady();
    const events = demoEvents(ACCOUNTS, 3, seed);
    await produceEvents(kafka, d.eventsTopic, events);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    const oracle = accountsOracle(events);
    const idle = [...oracle]
      .filter(([, value]) => evaluateCondition(DORMANCY_SWEEP.condition, value, { asOf: AS_OF }))
      .map(([key]) => key)
      .sort();
    expect(idle).toHaveLength(ACCOUNTS * 0.3);
    return { d, oracle, idle, before: await changelogState(kafka, d.changelogTopic), proc };
  }

  async function inProcessScanner(d: Deployment, extra: Record<string, string> = {}): Promise<InProcessScanner> {
    const scanner = new InProcessScanner();
    cleanups.push(() => scanner.stop());
    return scanner.start(d, extra);
  }

  async function commandsOnTopic(d: Deployment) {
    return (await readTopic(kafka, d.commandsTopic, { isolation: 'read_committed', timeoutMs: 30_000 })).map((r) =>
      decodeCommand(Buffer.from(r.key!), Buffer.from(r.value!)),
    );
  }

  async function topicSize(topic: string): Promise<number> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);
    } finally {
      await admin.disconnect();
    }
  }

  /** The changelog after the scan: idle keys dormant at version + 1, every other key untouched. */
  async function expectSwept(s: Seeded, except: Set<string> = new Set()): Promise<Map<string, StoredEntity>> {
    await waitCaughtUp(kafka, s.d.appId, s.d.commandsTopic);
    const after = await changelogState(kafka, s.d.changelogTopic);
    expect(after.size).toBe(s.oracle.size);
    const idle = new Set(s.idle);
    for (const [key, value] of s.oracle) {
      if (except.has(key)) continue;
      const was = s.before.get(key)!;
      const now = after.get(key)!;
      if (idle.has(key)) {
        expect([key, now.value, now.version]).toEqual([key, { ...value, status: 'dormant' }, was.version + 1]);
      } else {
        expect([key, now.value, now.version]).toEqual([key, value, was.version]);
      }
    }
    return after;
  }

  it('the dormancy sweep turns exactly the oracle’s idle accounts dormant, and its counts equal the oracle', async () => {
    const s = await seeded(21);
    const { api } = await inProcessScanner(s.d);
    const created = await api.create({ ...DORMANCY_SWEEP, asOf: new Date(AS_OF).toISOString() });
    expect(created.status).toBe('pending');

    const done = await api.finished(created.id);
    expect(done.status).toBe('completed');
    expect(done.counts).toEqual({
      scanned: ACCOUNTS,
      matched: s.idle.length,
      emitted: s.idle.length,
      pending: 0,
      results: {
        applied: s.idle.length,
        condition_false: 0,
        version_conflict: 0,
        not_found: 0,
        duplicate: 0,
        invalid: 0,
      },
    });
    expect(done.asOf).toBe(new Date(AS_OF).toISOString());
    await expectSwept(s);
    const commands = await commandsOnTopic(s.d);
    expect(commands.map((c) => c.key).sort()).toEqual(s.idle);
    expect(new Set(commands.map((c) => c.asOf))).toEqual(new Set([AS_OF]));
  });

  it('an account reactivated after the walk read it comes back condition_false and stays active', async () => {
    const s = await seeded(22);
    const scanner = new ScannerProcess(s.d);
    cleanups.push(async () => {
      await scanner.kill();
      scanner.cleanup();
    });
    await scanner.start();
    const pid = (scanner as unknown as { child: ChildProcess }).child.pid!;
    // About a second of commands per batch, sent over that second: the batch's later commands are
    // recorded (walked) well before they go out.
    const created = await scanner.api.create({ ...DORMANCY_SWEEP, asOf: AS_OF, options: { rate: 80 } });
    const reads = readCountsUntilFinished(scanner.api, created.id);
    await scanner.api.waitFor(created.id, (v) => v.counts.results.applied >= 20, 'the first commands to be applied');

    // Freeze the scanner mid-batch and pick commands it has recorded but not yet handed out.
    const scans = new Database(join(scanner.stateDir, 'scans.sqlite'), { readonly: true });
    let walkedNotSent: string[] = [];
    try {
      walkedNotSent = await waitUntil(
        async () => {
          process.kill(pid, 'SIGSTOP');
          const row = scans.prepare('SELECT cursor, inflight FROM scans WHERE id = ?').get(created.id) as {
            cursor: string | null;
            inflight: string | null;
          };
          const inflight = row.inflight === null ? null : (JSON.parse(row.inflight) as { toKey: string; sent: number });
          const keys =
            inflight === null
              ? []
              : (scans
                  .prepare('SELECT key FROM scan_commands WHERE scan_id = ? AND key > ? AND key <= ? ORDER BY key')
                  .pluck()
                  .all(created.id, row.cursor ?? '', inflight.toKey) as string[]);
          const unsent = inflight === null ? [] : keys.slice(inflight.sent);
          if (unsent.length >= 3) return unsent.slice(-10);
          process.kill(pid, 'SIGCONT');
          await new Promise((r) => setTimeout(r, 50 + Math.random() * 200));
          return false;
        },
        { timeoutMs: 60_000, intervalMs: 10, message: 'a batch with commands not yet sent' },
      );
    } finally {
      scans.close();
    }
    try {
      // While it is frozen, those accounts become active again, and the processor applies that.
      await produceEvents(
        kafka,
        s.d.eventsTopic,
        walkedNotSent.map((key) => ({ key, event: { type: 'activity', at: AS_OF - DAY, data: {} } })),
      );
      await waitCaughtUp(kafka, s.d.appId, s.d.eventsTopic);
    } finally {
      process.kill(pid, 'SIGCONT');
    }

    const done = await scanner.api.finished(created.id);
    expect(done.status).toBe('completed');
    expect(done.counts).toMatchObject({
      scanned: ACCOUNTS,
      matched: s.idle.length,
      emitted: s.idle.length,
      pending: 0,
    });
    // Every read while it ran added up: emitted = pending + results, and emitted grew as commands went out.
    const polled = await reads;
    expect(polled.filter((c) => c.emitted !== c.pending + c.answered)).toEqual([]);
    expect(polled.filter((c) => c.emitted > c.matched)).toEqual([]);
    expect(new Set(polled.map((c) => c.emitted)).size).toBeGreaterThan(s.idle.length / 80);
    // The processor re-checked each command against the current value, not the replica's.
    expect(done.counts.results).toMatchObject({
      applied: s.idle.length - walkedNotSent.length,
      condition_false: walkedNotSent.length,
    });
    const after = await expectSwept(s, new Set(walkedNotSent));
    for (const key of walkedNotSent) {
      expect([key, after.get(key)!.value]).toEqual([
        key,
        { ...s.oracle.get(key)!, status: 'active', lastActiveAt: AS_OF - DAY, counters: expect.anything() },
      ]);
    }
  });

  it('a sweep is paced by the processor’s event p99: a budget events cannot meet cuts the walk to its floor, and it still finishes', async () => {
    const s = await seeded(25);
    const scanner = await inProcessScanner(s.d, {
      PROCESSOR_URLS: await s.proc.url,
      PROCESSOR_API_TOKEN: STATE_TOKEN,
    });
    // Events keep arriving during the sweep, so the processor has an event p99 to report: sign-ups of
    // new active accounts, which the sweep never matches.
    const load = generateAccountEvents({
      accounts: 20_000,
      eventsPerAccount: 1,
      seed: 5,
      now: AS_OF,
      dormantFraction: 0,
    });
    const producer = kafka.producer();
    await producer.connect();
    let producing = true;
    const loading = (async () => {
      for (let i = ACCOUNTS; producing && i < load.length; i += 20) {
        const messages = load.slice(i, i + 20).map(({ key, event }) => ({ key, value: encodeEvent(event) }));
        await producer.send({ topic: s.d.eventsTopic, messages });
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    cleanups.push(async () => {
      producing = false;
      await loading;
      await producer.disconnect();
    });
    // No commit takes 1 ms: every reading is over budget.
    const { id } = await scanner.api.create({
      ...DORMANCY_SWEEP,
      asOf: AS_OF,
      options: { latencyBudget: { p99Ms: 1 }, maxCommands: 300 },
    });
    const held = await scanner.api.waitFor(
      id,
      (v) => v.pace?.limiter === 'budget',
      'the budget to hold the walk',
      60_000,
    );
    expect(held.pace).toMatchObject({ budgetP99Ms: 1, eventP99Ms: expect.any(Number) });
    expect(held.pace!.eventP99Ms).toBeGreaterThan(1);
    expect(held.pace!.rate).toBeLessThan(50); // cut from the 50/s it starts at
    const floor = await scanner.api.waitFor(
      id,
      (v) => v.pace?.rate === 10 || v.status !== 'running',
      'the floor',
      60_000,
    );
    expect(floor.pace).toMatchObject({ rate: 10, limiter: 'budget' });
    const done = await scanner.api.finished(id);
    expect(done).toMatchObject({ status: 'completed', pace: null, counts: { emitted: 300, pending: 0 } });
  });

  it('a dry run emits nothing; cancel stops emission; bad requests get precise errors', async () => {
    const s = await seeded(23);
    const { api } = await inProcessScanner(s.d, { MAX_BODY_BYTES: '2048' });

    const dry = await api.create({ ...DORMANCY_SWEEP, asOf: AS_OF, options: { dryRun: true } });
    const dryDone = await api.finished(dry.id);
    expect(dryDone).toMatchObject({
      status: 'completed',
      counts: { scanned: ACCOUNTS, matched: s.idle.length, emitted: 0, pending: 0 },
    });
    expect(await topicSize(s.d.commandsTopic)).toBe(0);

    const scan = await api.create({ ...DORMANCY_SWEEP, asOf: AS_OF, options: { rate: 50 } });
    await api.waitFor(scan.id, (v) => v.counts.emitted >= 20, 'some commands to be emitted');
    const cancel = await api.call('POST', `/scans/${scan.id}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.json.status).toBe('cancelled');
    const emitted = cancel.json.counts.emitted as number;
    expect(emitted).toBeGreaterThanOrEqual(20);
    expect(emitted).toBeLessThan(s.idle.length);
    // Commands already sent still get their results, and they are still recorded.
    const settled = await api.waitFor(scan.id, (v) => v.counts.pending === 0, 'the emitted commands’ results');
    expect(settled).toMatchObject({ status: 'cancelled', counts: { emitted, results: { applied: emitted } } });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await topicSize(s.d.commandsTopic)).toBe(emitted);
    expect((await api.call('POST', `/scans/${scan.id}/cancel`)).status).toBe(409);

    // Auth: every scan route needs the token; health, readiness, metrics and the document do not.
    for (const [method, path] of [
      ['POST', '/scans'],
      ['GET', '/scans'],
      ['GET', `/scans/${scan.id}`],
      ['POST', `/scans/${scan.id}/cancel`],
    ]) {
      for (const token of [null, 'not-the-right-token-at-all']) {
        const res = await api.call(method!, path!, method === 'POST' ? DORMANCY_SWEEP : undefined, token);
        expect([method, path, res.status]).toEqual([method, path, 401]);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(res.text).not.toContain(TOKEN);
      }
    }
    for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json'])
      expect((await api.call('GET', path, undefined, null)).status).toBe(200);
    const metrics = (await api.call('GET', '/metrics', undefined, null)).text;
    expect(metrics).toMatch(/scanner_replica_lag_records\{partition="0"\} 0/);
    expect(metrics).toMatch(/scanner_scans\{status="cancelled"\} 1/);

    // Validation: 400 naming the field, 404 for an unknown scan, 413 above MAX_BODY_BYTES.
    const bad = await api.call('POST', '/scans', {
      condition: { all: [{ field: 'status', op: 'eqq', value: 'active' }] },
      action: { domain: 'nope' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.issues.map((i: { path: string }) => i.path)).toEqual([
      '/body/condition/all/0/op',
      '/body/action/domain',
    ]);
    const unknown = await api.call('POST', '/scans', { ...DORMANCY_SWEEP, options: { rate: 5, fast: true } });
    expect([unknown.status, unknown.json.issues]).toEqual([
      400,
      [{ path: '/body/options/fast', message: 'unknown property "fast"' }],
    ]);
    expect((await api.call('GET', '/scans/no-such-scan')).status).toBe(404);
    const big = await api.call('POST', '/scans', { ...DORMANCY_SWEEP, note: 'x'.repeat(4_000) });
    expect([big.status, big.json.error]).toEqual([413, 'body_too_large']);
    const list = await api.call('GET', '/scans?limit=5');
    expect(list.json.scans.map((v: { id: string }) => v.id)).toEqual([scan.id, dry.id]);

    // The CLI: creates a scan, follows it to the end, prints the counts; exit 0 only when completed.
    const ok = await runCli(['--preset', 'dormant', '--dry-run', '--as-of', String(AS_OF), '--url', api.url], {
      STATE_RELAY_API_TOKEN: TOKEN,
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/scan \S+ completed/);
    // The cancelled scan's applied commands already made those accounts dormant.
    expect(ok.stdout).toMatch(new RegExp(`matched ${s.idle.length - emitted}, emitted 0`));
    expect(ok.stdout).toMatch(/applied\s+0/);
    const denied = await runCli(['--preset', 'dormant', '--url', api.url, '--token', 'wrong-token-wrong-token']);
    expect(denied.code).toBe(3);
    expect(denied.stderr).toMatch(/401 unauthorized: the bearer token is not valid/);
    expect(denied.stdout + denied.stderr).not.toContain('wrong-token-wrong-token');
    const invalid = await runCli([
      '--condition',
      '{"field":"status","op":"eqq","value":1}',
      '--action',
      '{"delete":true}',
      '--url',
      api.url,
      '--token',
      TOKEN,
    ]);
    expect(invalid.code).toBe(3);
    expect(invalid.stderr).toMatch(/\/body\/condition\/op: unknown operator "eqq"/);
  });

  it('a scanner stopped (SIGTERM) or killed (SIGKILL) mid-scan resumes on restart, and nothing is applied twice', async () => {
    const s = await seeded(24);
    const first = new ScannerProcess(s.d);
    cleanups.push(async () => {
      await first.kill();
      first.cleanup();
    });
    await first.start();
    const created = await first.api.create({ ...DORMANCY_SWEEP, asOf: AS_OF, options: { rate: 100 } });
    const early = await first.api.waitFor(created.id, (v) => v.counts.results.applied >= 100, 'a sixth of the sweep');
    expect(await first.stop()).toBe(0); // graceful: stops at a chunk boundary, state persisted
    expect(early).toMatchObject({ status: 'running', phase: 'walking' });

    const second = new ScannerProcess(s.d, first.stateDir);
    cleanups.push(() => second.kill());
    await second.start();
    const midway = await second.api.waitFor(created.id, (v) => v.counts.results.applied >= 300, 'half the sweep');
    await second.kill();
    expect(midway).toMatchObject({ status: 'running', phase: 'walking' });
    expect(midway.counts.emitted).toBeLessThan(s.idle.length);

    const third = new ScannerProcess(s.d, first.stateDir);
    cleanups.push(() => third.kill());
    await third.start();
    const done = await third.api.finished(created.id);
    expect(done.status).toBe('completed');
    expect(done.counts).toMatchObject({
      scanned: ACCOUNTS,
      matched: s.idle.length,
      emitted: s.idle.length,
      pending: 0,
    });
    expect(done.counts.results).toMatchObject({ applied: s.idle.length, condition_false: 0, invalid: 0 });
    await expectSwept(s); // each idle key's version went up by exactly one
    const commands = await commandsOnTopic(s.d);
    expect(new Set(commands.map((c) => c.commandId)).size).toBe(s.idle.length);
  });
});
