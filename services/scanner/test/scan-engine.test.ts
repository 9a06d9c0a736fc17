import { encodeStoredEntity } from '@state-relay/contracts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import type { UpdateCommand } from '@state-relay/contracts';
import { ReplicaStore, type ChangelogRecord } from '@state-relay/store';
import { waitUntil } from '@state-relay/testkit';
import pino from 'pino';
import { recordBytes, MAX_REQUEST_BYTES } from '@state-relay/kafka-runtime';
import { encodeCommand } from '@state-relay/contracts';
import { CommandSendError, type CommandSink } from '../src/scans/command-sender';
import { createScannerMetrics } from '../src/metrics';
import { ScanEngine, type ScanEngineDeps } from '../src/scans/scan-engine';
import { openScansDatabase, type ScansDatabase } from '../src/scanner';
import { EngineScanService } from '../src/scans/scan-service';
import type { ScanStore } from '../src/scans/scan-store';
import { scanFinished } from './scan-wait';

const DAY = 86_400_000;
const NO_READINGS = { latest: () => undefined, baseline: () => null };
const NOW = Date.UTC(2026, 10, 1);
const ROWS = 1_000;

/** Every third account is idle for 40 days: 334 of 1000 match the dormancy sweep. */
function seed(replica: ReplicaStore): Set<string> {
  const records: ChangelogRecord[] = [];
  const matching = new Set<string>();
  for (let i = 0; i < ROWS; i++) {
    const key = `acct-${String(i).padStart(6, '0')}`;
    const idle = i % 3 === 0;
    if (idle) matching.add(key);
    const value = { status: 'active', lastActiveAt: NOW - (idle ? 40 : 2) * DAY, balance: i };
    records.push({
      partition: i % 4,
      offset: String(Math.floor(i / 4)),
      key,
      value: encodeStoredEntity({ version: 2, value, seen: '' }),
    });
  }
  replica.apply(records);
  return matching;
}

/** Records what is sent; answers each command as the processor would (applied), unless told to hold. */
class FakeProcessor implements CommandSink {
  readonly sent: UpdateCommand[] = [];
  answer = true;
  hang = false;
  onSend?: (batch: readonly UpdateCommand[]) => void;
  constructor(
    private readonly stores: () => ScanStore[],
    private readonly engines: () => ScanEngine[],
  ) {}

  async send(commands: readonly UpdateCommand[]): Promise<void> {
    this.sent.push(...commands);
    this.onSend?.(commands);
    if (this.answer) this.reply(commands);
    // Delivered, but the scanner is killed before it hears back.
    if (this.hang) return new Promise(() => undefined);
  }

  reply(commands: readonly UpdateCommand[]): void {
    const results = commands.map((c) => ({
      commandId: c.commandId,
      scanId: c.scanId,
      key: c.key,
      outcome: 'applied' as const,
      processedAt: NOW,
    }));
    for (const store of this.stores()) store.recordResults(results);
    for (const engine of this.engines()) engine.notifyResults();
  }
}

describe('scan engine (real SQLite, fake Kafka)', () => {
  let dir: string;
  let replica: ReplicaStore;
  let matching: Set<string>;
  const stores: ScanStore[] = [];
  const databases: ScansDatabase[] = [];
  const engines: ScanEngine[] = [];
  let processor: FakeProcessor;
  let lag = 0;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'scanner-engine-'));
    replica = ReplicaStore.open({ path: join(dir, 'replica.sqlite') });
    matching = seed(replica);
    processor = new FakeProcessor(
      () => stores,
      () => engines,
    );
    lag = 0;
  });
  afterEach(async () => {
    // An engine stops within its current SQLite step; on a busy machine that can take well over
    // 200 ms, and an engine still writing re-creates scans.sqlite's journal while the directory is
    // removed (ENOTEMPTY, seen in CI). Engines abandoned by a test are not in `engines`.
    for (const e of engines.splice(0)) await Promise.race([e.stop(), new Promise((r) => setTimeout(r, 10_000))]);
    stores.splice(0);
    for (const d of databases.splice(0)) d.close();
    replica.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });

  function engine(overrides: Partial<ScanEngineDeps> = {}): { engine: ScanEngine; store: ScanStore } {
    const database = openScansDatabase(join(dir, 'scans.sqlite'));
    databases.push(database);
    const store = database.scans;
    stores.push(store);
    const e = new ScanEngine({
      store,
      replica,
      replicaProgress: { currentEnds: async () => new Map(), waitFor: async () => undefined },
      sink: processor,
      commandLag: { lag: async () => lag },
      metrics: createScannerMetrics(),
      logger: pino({ level: 'silent' }),
      chunkSize: 100,
      maxCommandLag: 1_000,
      replicaCatchUpTimeoutMs: 1_000,
      knownDomainActions: ['mark_dormant'],
      backoffPollMs: 10,
      commandsPerBatch: 50,
      // These tests are about other things than pacing: the walk starts at full speed (the tests
      // below the pacing ones start it low).
      pacing: { signal: NO_READINGS, defaultBudget: { off: true }, tuning: { startRate: 1_000_000 } },
      ...overrides,
    });
    engines.push(e);
    return { engine: e, store };
  }

  const finished = (store: ScanStore, id: string) => scanFinished(store, id, 20_000);

  it('walks every row once and emits one command per match, completing when every result is in', async () => {
    const { engine: e, store } = engine();
    e.start();
    const scan = e.create({ ...DORMANCY_SWEEP, asOf: NOW });
    const done = await finished(store, scan.id);
    expect(done).toMatchObject({
      status: 'completed',
      scanned: ROWS,
      matched: matching.size,
      emitted: matching.size,
      resolved: matching.size,
    });
    expect(processor.sent.map((c) => c.key).sort()).toEqual([...matching].sort());
    expect(new Set(processor.sent.map((c) => c.commandId)).size).toBe(matching.size);
    expect(processor.sent.every((c) => c.asOf === NOW && c.scanId === scan.id)).toBe(true);
    expect(store.outcomeCounts(scan.id)).toMatchObject({ applied: matching.size, condition_false: 0 });
    expect(store.commands.countResults(scan.id)).toEqual(store.outcomeCounts(scan.id)); // the counters equal GROUP BY
  });

  it('stays running while results are missing', async () => {
    processor.answer = false;
    const { engine: e, store } = engine();
    e.start();
    const scan = e.create({ ...DORMANCY_SWEEP, asOf: NOW });
    await waitUntil(() => store.get(scan.id)!.phase === 'awaiting_results', { timeoutMs: 10_000, intervalMs: 10 });
    expect(store.get(scan.id)).toMatchObject({ status: 'running', emitted: matching.size, resolved: 0 });
    processor.reply(processor.sent.slice(0, 10));
    processor.reply(processor.sent.slice(0, 10)); // a re-delivered result changes nothing
    expect(store.get(scan.id)!.resolved).toBe(10);
    processor.reply(processor.sent.slice(10));
    expect((await finished(store, scan.id)).status).toBe('completed');
  });

  it('runs scans one at a time, in creation order', async () => {
    processor.answer = false;
    const { engine: e, store } = engine();
    e.start();
    const first = e.create({ ...DORMANCY_SWEEP, asOf: NOW });
    const second = e.create({ ...DORMANCY_SWEEP, asOf: NOW, options: { dryRun: true } });
    await waitUntil(() => store.get(first.id)!.phase === 'awaiting_results', { timeoutMs: 10_000, intervalMs: 10 });
    expect(store.get(second.id)!.status).toBe('pending');
    processor.reply(processor.sent);
    expect((await finished(store, first.id)).status).toBe('completed');
    expect(await finished(store, second.id)).toMatchObject({ status: 'completed', matched: matching.size, emitted: 0 });
  });

  it('emits nothing on a dry run, and stops at maxCommands', async () => {
    const { engine: e, store } = engine();
    e.start();
    const dry = e.create({ ...DORMANCY_SWEEP, asOf: NOW, options: { dryRun: true } });
    expect(await finished(store, dry.id)).toMatchObject({
      status: 'completed',
      scanned: ROWS,
      matched: matching.size,
      emitted: 0,
    });
    expect(processor.sent).toHaveLength(0);
    const capped = e.create({ ...DORMANCY_SWEEP, asOf: NOW, options: { maxCommands: 50 } });
    expect(await finished(store, capped.id)).toMatchObject({ status: 'completed', emitted: 50, resolved: 50 });
    expect(processor.sent).toHaveLength(50);
  });

  it('backs off while the processor lags on commands, and counts the time', async () => {
    lag = 5_000;
    const { engine: e, store } = engine();
    e.start();
    const scan = e.create({ ...DORMANCY_SWEEP, asOf: NOW });
    await new Promise((r) => setTimeout(r, 150));
    expect(processor.sent).toHaveLength(0);
    expect(e.pace(scan.id)).toMatchObject({ limiter: 'lag' }); // the pause cut the pacer's rate too
    lag = 0;
    const done = await finished(store, scan.id);
    expect(done.status).toBe('completed');
    expect(done.backoffMs).toBeGreaterThanOrEqual(100);
  });

  it('cancels at a chunk boundary: nothing more is sent, and results of what was sent still count', async () => {
    const { engine: e, store } = engine();
    e.start();
    const scan = e.create({ ...DORMANCY_SWEEP, asOf: NOW, options: { rate: 200 } });
    await waitUntil(() => processor.sent.length >= 50, { timeoutMs: 10_000, intervalMs: 5 });
    const cancelled = await e.cancel(scan.id);
    const sentAtCancel = processor.sent.length;
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.emitted).toBe(sentAtCancel);
    expect(cancelled.emitted).toBeLessThan(matching.size);
    await new Promise((r) => setTimeout(r, 300));
    expect(processor.sent).toHaveLength(sentAtCancel);
    expect(store.outcomeCounts(scan.id).applied).toBe(sentAtCancel);
    await expect(e.cancel(scan.id)).rejects.toMatchObject({ code: 'scan_finished' });
  });

  it('resumes a scan left running by a killed scanner, re-sending only the chunk that was in flight', async () => {
    const first = engine();
    first.engine.start();
    let batches = 0;
    processor.onSend = () => {
      if (++batches === 3) processor.hang = true; // the 3rd chunk is delivered, but its send never returns
    };
    const scan = first.engine.create({ ...DORMANCY_SWEEP, asOf: NOW });
    await waitUntil(() => processor.hang && first.store.get(scan.id)!.inflight !== null, {
      timeoutMs: 10_000,
      intervalMs: 5,
    });
    const before = first.store.get(scan.id)!;
    expect(before.status).toBe('running');
    expect(before.emitted).toBe(processor.sent.length); // counted as they were handed out
    const inflight = before.inflight!.commands;
    expect(inflight).toBeGreaterThan(0);
    engines.splice(engines.indexOf(first.engine), 1); // abandoned, as if SIGKILLed

    processor.hang = false;
    processor.onSend = undefined;
    const second = engine();
    second.engine.start();
    const done = await finished(second.store, scan.id);
    expect(done).toMatchObject({
      status: 'completed',
      scanned: ROWS,
      matched: matching.size,
      emitted: matching.size,
      resolved: matching.size,
    });
    const ids = processor.sent.map((c) => c.commandId);
    expect(new Set(ids).size).toBe(matching.size); // every match got its command, under one id
    expect(ids.length).toBe(matching.size + inflight); // only the chunk in flight went twice
    expect(second.store.outcomeCounts(scan.id).applied).toBe(matching.size);
  });

  it('sends big commands in requests bounded by bytes, so no partition gets a batch over max.message.bytes', async () => {
    const { engine: e, store } = engine();
    const requests: number[] = [];
    processor.onSend = (batch) =>
      requests.push(batch.reduce((sum, c) => sum + recordBytes({ key: c.key, value: encodeCommand(c) }), 0));
    e.start();
    const big = { ...DORMANCY_SWEEP, action: { set: { note: 'x'.repeat(60_000) } }, asOf: NOW };
    const done = await finished(store, e.create(big).id);
    expect(done).toMatchObject({ status: 'completed', emitted: matching.size, resolved: matching.size });
    expect(Math.max(...requests)).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
    expect(requests.length).toBeGreaterThanOrEqual(Math.ceil((matching.size * 60_000) / MAX_REQUEST_BYTES));
  });

  it('a send the broker refuses for good is not counted as emitted, and the scan fails saying why', async () => {
    let sends = 0;
    const refused: UpdateCommand[] = [];
    const sink: CommandSink = {
      send: async (commands) => {
        if (++sends === 3) {
          refused.push(...commands);
          const tooLarge = Object.assign(new Error('The request included a message larger than the max message size'), {
            retriable: false,
          });
          throw new CommandSendError('commands', tooLarge);
        }
        processor.reply(commands);
      },
    };
    const { engine: e2, store: s2 } = engine({ sink });
    e2.start();
    const done = await finished(s2, e2.create({ ...DORMANCY_SWEEP, asOf: NOW }).id);
    expect(done.status).toBe('failed');
    expect(done.error).toContain('larger than the max message size');
    expect(refused.length).toBeGreaterThan(0);
    expect(done.emitted).toBe(2 * 50); // the two requests delivered, not the refused one
    expect(done.resolved).toBe(done.emitted);
    expect(done.inflight).toBeNull();
    // Their rows are forgotten: a late result for a refused command is not recorded.
    s2.recordResults(refused.map((c) => ({ ...c, outcome: 'applied' as const, processedAt: NOW })));
    expect(s2.get(done.id)!.resolved).toBe(done.emitted);
  });

  describe('paced by the events’ latency (issue 32)', () => {
    it('starts low and ramps: the first commands trickle out instead of landing as one burst', async () => {
      // The pacer's defaults: 50 commands/s at first, doubling each second; no processor readings.
      const { engine: e, store } = engine({ pacing: { signal: NO_READINGS, defaultBudget: { ratio: 1.2 } } });
      e.start();
      const scan = e.create({ ...DORMANCY_SWEEP, asOf: NOW });
      await waitUntil(() => processor.sent.length > 0, { timeoutMs: 10_000, intervalMs: 5 });
      await new Promise((r) => setTimeout(r, 500));
      expect(processor.sent.length).toBeLessThanOrEqual(50); // half a second at 50/s, not 334 at once
      expect(e.pace(scan.id)).toMatchObject({ limiter: 'ramp', budgetP99Ms: null });
      const done = await finished(store, scan.id);
      expect(done).toMatchObject({ status: 'completed', emitted: matching.size });
      expect(e.pace(scan.id)).toBeNull(); // no longer walking
    });

    it('a cut takes effect mid-batch: the next request is sized to the new rate, not the one the batch began at', async () => {
      let reading: { at: number; p99Ms: number | null } | undefined; // no reading yet: the walk holds 500/s
      const signal = { latest: () => reading, baseline: () => 100 };
      const { engine: e, store } = engine({
        commandsPerBatch: 2_000, // one batch holds every match
        pacing: { signal, defaultBudget: { p99Ms: 300 }, tuning: { startRate: 500, windowMs: 60_000 } },
      });
      const requests: number[] = [];
      processor.onSend = (batch) => {
        requests.push(batch.length);
        if (requests.length === 1) reading = { at: 2, p99Ms: 900 }; // the first request hurts events
      };
      e.start();
      const scan = e.create({ ...DORMANCY_SWEEP, asOf: NOW });
      await waitUntil(() => requests.length >= 3, { timeoutMs: 10_000, intervalMs: 5 });
      expect(store.get(scan.id)!.inflight).toMatchObject({ commands: matching.size }); // still the first batch
      expect(requests.slice(0, 3)).toEqual([50, 25, 25]); // 100 ms at 500/s, then 100 ms at 250/s
      expect(e.pace(scan.id)).toMatchObject({ rate: 250, limiter: 'budget', eventP99Ms: 900 });
      expect((await e.cancel(scan.id)).status).toBe('cancelled');
    });

    it('backs off when the events’ p99 goes over the budget, shown in the scan’s pace', async () => {
      let p99: number | null = 100;
      // A reading every 500 ms, as the scanner samples the processors (once a second in service).
      const signal = { latest: () => ({ at: Math.floor(Date.now() / 500), p99Ms: p99 }), baseline: () => 100 };
      const { engine: e, store } = engine({
        pacing: { signal, defaultBudget: { ratio: 1.5 }, tuning: { startRate: 20, floor: 5, windowMs: 500 } },
      });
      const service = new EngineScanService(e, store, { lag: () => [] });
      e.start();
      const scan = e.create({ ...DORMANCY_SWEEP, asOf: NOW });
      await waitUntil(() => processor.sent.length >= 10, { timeoutMs: 10_000, intervalMs: 5 });
      expect(service.get(scan.id).pace).toMatchObject({ limiter: 'ramp', budgetP99Ms: 150, baselineP99Ms: 100 });

      p99 = 1_000; // events now wait 1 s: ten times the baseline
      await waitUntil(() => e.pace(scan.id)?.rate === 5, { timeoutMs: 10_000, intervalMs: 10 });
      expect(service.get(scan.id).pace).toEqual({
        rate: 5,
        limiter: 'budget',
        budgetP99Ms: 150,
        baselineP99Ms: 100,
        eventP99Ms: 1_000,
      });
      const before = processor.sent.length;
      await new Promise((r) => setTimeout(r, 1_000));
      expect(processor.sent.length - before).toBeLessThanOrEqual(12); // about 5 a second, not a ramp
      expect(store.get(scan.id)!.status).toBe('running');

      p99 = null; // events idle: the walk climbs again
      const rate = e.pace(scan.id)!.rate;
      await waitUntil(() => (e.pace(scan.id)?.rate ?? 0) > rate, { timeoutMs: 10_000, intervalMs: 10 });
      expect((await e.cancel(scan.id)).status).toBe('cancelled');
    });
  });
});
