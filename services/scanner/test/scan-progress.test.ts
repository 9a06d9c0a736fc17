import { encodeStoredEntity } from '@state-relay/contracts';
import { mulberry32 } from '@state-relay/accounts/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import type { CommandResult, UpdateCommand } from '@state-relay/contracts';
import { ReplicaStore, type ChangelogRecord } from '@state-relay/store';
import { waitUntil } from '@state-relay/testkit';
import fc from 'fast-check';
import pino from 'pino';
import type { CommandSink } from '../src/scans/command-sender';
import { createScannerMetrics } from '../src/metrics';
import type { ScanOptions } from '../src/scans/scan';
import { ScanEngine, type ScanEngineDeps } from '../src/scans/scan-engine';
import { commandsPerBatch } from '../src/scans/scan-plan';
import { EngineScanService } from '../src/scans/scan-service';
import { openScansDatabase } from '../src/scanner';
import type { ScanStore } from '../src/scans/scan-store';
import type { ScanView } from '../src/scans/scan-view';
import { scanFinished } from './scan-wait';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 1);
type Layout = 'scattered' | 'clustered' | 'all' | 'none';

/** `rows` accounts; which ones the dormancy sweep matches depends on the layout. Returns the matching keys. */
function seed(replica: ReplicaStore, rows: number, layout: Layout): string[] {
  const records: ChangelogRecord[] = [];
  const matching: string[] = [];
  for (let i = 0; i < rows; i++) {
    const key = `acct-${String(i).padStart(6, '0')}`;
    const idle =
      layout === 'all' ||
      (layout === 'scattered' && i % 3 === 0) ||
      (layout === 'clustered' && i >= rows / 2 && i < rows / 2 + rows / 4);
    if (idle) matching.push(key);
    const value = { status: 'active', lastActiveAt: NOW - (idle ? 40 : 2) * DAY };
    records.push({ partition: 0, offset: String(i), key, value: encodeStoredEntity({ version: 1, value, seen: '' }) });
  }
  replica.apply(records);
  return matching;
}

/** A small deterministic PRNG, so a failing fast-check case replays exactly. */
const prng = mulberry32;

const applied = (c: UpdateCommand): CommandResult => ({
  commandId: c.commandId,
  scanId: c.scanId,
  key: c.key,
  outcome: 'applied',
  processedAt: NOW,
});

/** The API's invariants on one read of a scan. */
function expectCountsAddUp(view: ScanView, previous: ScanView | undefined): void {
  const { emitted, pending, results, matched } = view.counts;
  const answered = Object.values(results).reduce((a, b) => a + b, 0);
  expect({ emitted, pending, answered, sum: pending + answered }).toEqual({ emitted, pending, answered, sum: emitted });
  expect(pending).toBeGreaterThanOrEqual(0);
  expect(emitted).toBeLessThanOrEqual(matched);
  expect(matched).toBeLessThanOrEqual(view.counts.scanned);
  if (previous) {
    expect(emitted).toBeGreaterThanOrEqual(previous.counts.emitted);
    expect(view.counts.scanned).toBeGreaterThanOrEqual(previous.counts.scanned);
    expect(answered).toBeGreaterThanOrEqual(Object.values(previous.counts.results).reduce((a, b) => a + b, 0));
  }
}

describe('scan progress counts and batches (real SQLite, fake Kafka)', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function setup(sink: CommandSink, overrides: Partial<ScanEngineDeps> = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'scanner-progress-'));
    const replica = ReplicaStore.open({ path: join(dir, 'replica.sqlite') });
    const database = openScansDatabase(join(dir, 'scans.sqlite'));
    const store = database.scans;
    const engine = new ScanEngine({
      store,
      replica,
      replicaProgress: { currentEnds: async () => new Map(), waitFor: async () => undefined },
      sink,
      commandLag: { lag: async () => 0 },
      metrics: createScannerMetrics(),
      logger: pino({ level: 'silent' }),
      chunkSize: 100,
      maxCommandLag: 1_000,
      replicaCatchUpTimeoutMs: 1_000,
      knownDomainActions: ['mark_dormant'],
      sendRetryWindowMs: 60_000,
      // Batches and counts, not pacing, are tested here: the walk starts at its cap, not at the ramp's start.
      pacing: {
        signal: { latest: () => undefined, baseline: () => null },
        defaultBudget: { off: true },
        tuning: { startRate: 1_000_000 },
      },
      ...overrides,
    });
    const service = new EngineScanService(engine, store, { lag: () => [] });
    // The ETA's row count runs on a worker thread that may still hold the replica open: retry.
    cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 }));
    cleanups.push(() => replica.close());
    cleanups.push(() => database.close());
    cleanups.push(async () => {
      await engine.stop();
      // Each walk counts the replica's rows on a worker thread: let it finish before the files go.
      const counting = () => store.list(100, 0).filter((s) => s.startedAt !== null && s.replicaRows === null);
      await waitUntil(() => counting().length === 0, { timeoutMs: 10_000, intervalMs: 5 }).catch(() => undefined);
    });
    return { replica, store, engine, service };
  }

  const finished = (store: ScanStore, id: string) => scanFinished(store, id, 30_000);

  it('emitted = pending + results at every read, for any options and any timing of the results', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          rows: fc.integer({ min: 1, max: 300 }),
          layout: fc.constantFrom<Layout>('scattered', 'clustered', 'all', 'none'),
          rate: fc.constantFrom(undefined, 3_000, 20_000),
          batchSize: fc.constantFrom(undefined, 1, 7, 50, 1_000),
          maxCommands: fc.option(fc.integer({ min: 1, max: 200 }), { nil: undefined }),
          perBatch: fc.constantFrom(3, 50, 2_000),
          cancelAfterSends: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
          seed: fc.integer(),
        }),
        async ({ rows, layout, rate, batchSize, maxCommands, perBatch, cancelAfterSends, seed: s }) => {
          const random = prng(s);
          const reads: ScanView[] = [];
          let id = '';
          let check = () => undefined as void;
          let sends = 0;
          let maxInflight = 0;
          const sent = new Set<string>();
          const pendingReplies = new Set<NodeJS.Timeout>();
          let cancelled: Promise<unknown> | undefined;
          const sink: CommandSink = {
            send: async (commands) => {
              check();
              maxInflight = Math.max(maxInflight, ctx.store.get(id)!.inflight?.commands ?? 0);
              for (const c of commands) sent.add(c.commandId);
              // Some results arrive before the send returns, others later, some twice.
              const now: CommandResult[] = [];
              for (const c of commands) {
                const r = random();
                if (r < 0.3) now.push(applied(c));
                else {
                  const t = setTimeout(
                    () => {
                      pendingReplies.delete(t);
                      ctx.store.recordResults(r < 0.4 ? [applied(c), applied(c)] : [applied(c)]);
                      ctx.engine.notifyResults();
                      check();
                    },
                    Math.floor(random() * 5),
                  );
                  pendingReplies.add(t);
                }
              }
              ctx.store.recordResults(now);
              check();
              if (++sends === cancelAfterSends) cancelled = ctx.engine.cancel(id);
              await new Promise((r) => setImmediate(r));
              check();
            },
          };
          const ctx = setup(sink, { commandsPerBatch: perBatch });
          const matching = seed(ctx.replica, rows, layout);
          const options: ScanOptions = {
            ...(rate === undefined ? {} : { rate }),
            ...(batchSize === undefined ? {} : { batchSize }),
            ...(maxCommands === undefined ? {} : { maxCommands }),
          };
          // Reads happen in timers and in the sink: a broken invariant is kept, and thrown at the end.
          const broken: unknown[] = [];
          check = () => {
            try {
              const view = ctx.service.get(id);
              expectCountsAddUp(view, reads[reads.length - 1]);
              reads.push(view);
            } catch (err) {
              broken.push(err);
            }
          };
          ctx.engine.start();
          id = ctx.service.create({ ...DORMANCY_SWEEP, asOf: NOW, options }).id;
          const poller = setInterval(check, 1);
          try {
            const done = await finished(ctx.store, id);
            await cancelled;
            await waitUntil(() => pendingReplies.size === 0, { timeoutMs: 5_000, intervalMs: 2 });
            check();
            if (broken.length > 0) throw broken[0];
            const final = reads[reads.length - 1]!;
            const expected = Math.min(matching.length, maxCommands ?? Infinity);
            if (cancelAfterSends === undefined || done.status === 'completed') {
              expect(done.status).toBe('completed');
              expect(final.counts.emitted).toBe(expected);
            }
            // Every command handed out is counted and answered; none is counted twice.
            expect(final.counts).toMatchObject({ emitted: sent.size, pending: 0 });
            expect(final.counts.results.applied).toBe(sent.size);
            expect(maxInflight).toBeLessThanOrEqual(commandsPerBatch(options, perBatch));
          } finally {
            clearInterval(poller);
            for (const t of pendingReplies) clearTimeout(t);
            for (const c of cleanups.splice(0).reverse()) await c();
          }
        },
      ),
      { numRuns: 40 },
    );
  }, 180_000);

  it('under a rate, a batch holds about a second of commands, even when the matches sit side by side', async () => {
    const batches: Array<{ toKey: string; commands: number }> = [];
    let id = '';
    const sink: CommandSink = {
      send: async (commands) => {
        const { toKey, commands: n } = ctx.store.get(id)!.inflight!;
        batches.push({ toKey, commands: n });
        ctx.store.recordResults(commands.map(applied));
      },
    };
    // The default batch of 2,000 and CHUNK_SIZE 2,000, as in production.
    const ctx = setup(sink, { chunkSize: 2_000, commandsPerBatch: undefined });
    const matching = seed(ctx.replica, 1_200, 'clustered'); // 300 idle accounts side by side
    ctx.engine.start();
    for (const options of [{ rate: 100 }, { rate: 100, batchSize: 1_000 }]) {
      batches.length = 0;
      id = ctx.engine.create({ ...DORMANCY_SWEEP, asOf: NOW, options }).id;
      const done = await finished(ctx.store, id);
      expect(done).toMatchObject({ status: 'completed', scanned: 1_200, matched: 300, emitted: 300 });
      expect(Math.max(...batches.map((b) => b.commands))).toBe(100); // a second's worth, not all 300
      expect(new Set(batches.map((b) => b.toKey)).size).toBe(3); // the cursor moved after each second
      expect(ctx.store.commands.countResults(id).applied).toBe(matching.length);
    }
  }, 30_000); // two scans of 3 s each at 100 commands/s, in real time

  it('a cancel during the retry of a send keeps that batch: its results still count for the cancelled scan', async () => {
    let id = '';
    let attempts = 0;
    const delivered: UpdateCommand[] = [];
    let cancelled: Promise<ScanRecord> | undefined;
    const sink: CommandSink = {
      send: async (commands) => {
        attempts++;
        delivered.push(...commands);
        if (attempts === 2) {
          // The broker got the request but its answer was lost: a retriable failure. The operator
          // cancels while the send waits for its retry.
          setTimeout(() => (cancelled = ctx.engine.cancel(id)), 20);
          throw Object.assign(new Error('request timed out'), { retriable: true });
        }
      },
    };
    const ctx = setup(sink, { commandsPerBatch: 20 });
    seed(ctx.replica, 300, 'all');
    ctx.engine.start();
    id = ctx.engine.create({ ...DORMANCY_SWEEP, asOf: NOW }).id;
    await waitUntil(() => cancelled, { timeoutMs: 10_000, intervalMs: 2 });
    const atCancel = await cancelled!;
    expect(atCancel.status).toBe('cancelled');
    expect(attempts).toBe(2); // the retry never happened
    expect(delivered).toHaveLength(40); // two batches of 20, the second possibly delivered
    expect(atCancel.emitted).toBe(40);

    // The processor applied what it got, the retried batch included: every result is recorded.
    ctx.store.recordResults(delivered.map(applied));
    expect(ctx.service.get(id)).toMatchObject({
      status: 'cancelled',
      counts: { emitted: 40, pending: 0, results: { applied: 40 } },
    });
  });
});
