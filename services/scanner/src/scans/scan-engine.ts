import { randomUUID } from 'node:crypto';
import type { ReplicaStore } from '@state-relay/store';
import type { Logger } from 'pino';
import { AbortedError, ScanFinishedError, ScanNotFoundError, ScannerError, TooManyScansError } from '../errors';
import { FINISHED_STATUSES, type ScanRecord } from './scan';
import { maxDurationMs, planScan, type ScanRequest } from './scan-plan';
import { countReplicaRows } from '../replica/replica-count';
import type { PaceState } from './command-pacer';
import { ScanWalk, type WalkDeps } from './scan-walk';
import { Signal, sleep } from './wait';

/** What the engine needs to know about the replica's progress against the changelog. */
export interface ReplicaProgress {
  currentEnds(): Promise<Map<number, bigint>>;
  waitFor(target: Map<number, bigint>, timeoutMs: number, signal: AbortSignal): Promise<void>;
}

export interface ScanEngineDeps extends Omit<WalkDeps, 'replica' | 'now'> {
  replica: Pick<ReplicaStore, 'chunk' | 'path'>;
  replicaProgress: ReplicaProgress;
  replicaCatchUpTimeoutMs: number;
  knownDomainActions: string[];
  /** Pending and running scans at most (MAX_ACTIVE_SCANS); unlimited when absent. */
  maxActiveScans?: number;
  /** How long a scan without options.maxDuration may run (SCAN_MAX_DURATION_MS); unlimited when absent. */
  maxDurationMs?: number;
  now?: () => number;
  newId?: () => string;
}

interface Current {
  id: string;
  cancel: AbortController;
  done: Promise<void>;
}

/**
 * Runs scans one at a time, in creation order (FIFO); the others wait as `pending`. A scan holds
 * the slot until it finishes, results included, so the next one starts from a replica that
 * already reflects every command of the previous one. On start, a scan left `running` by a
 * stopped or crashed scanner resumes first, from its persisted cursor.
 */
export class ScanEngine {
  private readonly wake = new Signal();
  private readonly stopping = new AbortController();
  private current?: Current;
  /** The walk emitting now, for its pace (GET /scans/:id, the metrics). */
  private walking?: { id: string; walk: ScanWalk };
  private loop?: Promise<void>;
  /** Row counts still running on a worker thread; `stop()` waits for them (each holds a replica connection). */
  private readonly counts = new Set<Promise<void>>();
  private readonly now: () => number;

  constructor(private readonly deps: ScanEngineDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Validates and queues a scan; `asOf` is resolved here, once. Throws InvalidRequestError or TooManyScansError. */
  create(request: ScanRequest): ScanRecord {
    const { spec, asOf } = planScan(request, this.now(), this.deps.knownDomainActions);
    const { maxActiveScans = Infinity } = this.deps;
    if (this.deps.store.countActive() >= maxActiveScans) throw new TooManyScansError(maxActiveScans);
    const scan = this.deps.store.create((this.deps.newId ?? randomUUID)(), spec, asOf, this.now());
    this.deps.logger.info({ scanId: scan.id, asOf, options: spec.options }, 'scan queued');
    this.wake.notify();
    return scan;
  }

  /**
   * Cancels a pending scan at once, a running one at its next chunk boundary (this waits for it).
   * Commands already sent still get results, and they are still recorded.
   */
  async cancel(id: string): Promise<ScanRecord> {
    const { store } = this.deps;
    const scan = store.get(id);
    if (scan === undefined) throw new ScanNotFoundError(id);
    if (FINISHED_STATUSES.includes(scan.status)) throw new ScanFinishedError(id, scan.status);
    const current = this.current;
    if (current?.id === id) {
      current.cancel.abort();
      await current.done;
    } else {
      store.finish(id, 'cancelled', this.now());
      this.deps.logger.info({ scanId: id }, 'scan cancelled before it ran');
    }
    return store.get(id)!;
  }

  /** The pace of scan `id` if it is walking now (its rate and what limits it); null otherwise. */
  pace(id: string): PaceState | null {
    return this.walking?.id === id ? this.walking.walk.pace() : null;
  }

  /** The pace of the walk emitting now, whichever scan it is; null when none is. */
  currentPace(): PaceState | null {
    return this.walking?.walk.pace() ?? null;
  }

  /** New results arrived: a scan waiting for them may be complete. */
  notifyResults(): void {
    this.wake.notify();
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops at the running scan's next chunk boundary; it stays `running` and resumes on restart. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    await Promise.all(this.counts);
  }

  private async run(): Promise<void> {
    const { store, logger } = this.deps;
    while (!this.stopping.signal.aborted) {
      let scan: ScanRecord | undefined;
      try {
        scan = store.next();
      } catch (err) {
        logger.error({ err }, 'reading the scan queue failed');
      }
      if (scan === undefined) {
        await this.wake.wait(1_000, this.stopping.signal);
        continue;
      }
      const cancel = new AbortController();
      let finished!: () => void;
      const done = new Promise<void>((resolve) => (finished = resolve));
      this.current = { id: scan.id, cancel, done };
      try {
        await this.runScan(scan, cancel.signal);
      } finally {
        this.current = undefined;
        finished();
      }
    }
  }

  private async runScan(scan: ScanRecord, userCancel: AbortSignal): Promise<void> {
    const { store } = this.deps;
    const log = this.deps.logger.child({ scanId: scan.id });
    // Past its maximum duration (counted from when it first ran, across restarts) a scan stops as a
    // cancel does (what was sent still gets its results recorded), then ends failed.
    const limitMs = maxDurationMs(scan.spec.options, this.deps.maxDurationMs ?? Infinity);
    const overdue = deadlineSignal((scan.startedAt ?? this.now()) + limitMs - this.now());
    const cancelSignal = AbortSignal.any([userCancel, overdue.signal]);
    const signal = AbortSignal.any([this.stopping.signal, cancelSignal]);
    try {
      if (!scan.walkDone) await this.walk(scan, { any: signal, cancel: cancelSignal }, log);
      if (scan.spec.options.dryRun === true) {
        store.finish(scan.id, 'completed', this.now());
      } else {
        store.markRunning(scan.id, 'awaiting_results', this.now());
        await this.awaitResults(scan.id, signal);
        store.finish(scan.id, 'completed', this.now());
      }
      const done = store.get(scan.id)!;
      log.info({ scanned: done.scanned, matched: done.matched, emitted: done.emitted }, 'scan completed');
    } catch (err) {
      if (err instanceof AbortedError && overdue.signal.aborted && !userCancel.aborted) {
        const s = store.get(scan.id)!;
        const message =
          `the scan ran longer than its maximum duration, ${durationText(limitMs)} ` +
          `(${scan.spec.options.maxDuration === undefined ? 'SCAN_MAX_DURATION_MS' : 'options.maxDuration'}), ` +
          `and was stopped after scanning ${s.scanned} keys and emitting ${s.emitted} commands`;
        store.finish(scan.id, 'failed', this.now(), message);
        log.warn({ limitMs, scanned: s.scanned, emitted: s.emitted }, 'scan failed: over its maximum duration');
      } else if (err instanceof AbortedError && cancelSignal.aborted) {
        store.finish(scan.id, 'cancelled', this.now());
        log.info('scan cancelled');
      } else if (err instanceof AbortedError) {
        log.info('scanner stopping; the scan will resume from its cursor');
      } else {
        // The API shows this message: only our own errors say more than "internal error".
        const message = err instanceof ScannerError ? err.message : 'internal error; the scanner log has the details';
        log.error({ err }, 'scan failed');
        store.finish(scan.id, 'failed', this.now(), message);
      }
    } finally {
      overdue.clear();
    }
  }

  private async walk(scan: ScanRecord, signals: { any: AbortSignal; cancel: AbortSignal }, log: Logger): Promise<void> {
    const { store } = this.deps;
    store.markRunning(scan.id, 'waiting_for_replica', this.now());
    await this.waitForReplica(signals.any);
    store.setPhase(scan.id, 'walking');
    if (scan.replicaRows === null) this.countRowsFor(scan.id, log);
    log.info(
      { resumeAfter: scan.cursor, inflight: scan.inflight !== null },
      scan.startedAt === null ? 'scan walking' : 'scan resuming',
    );
    const walk = new ScanWalk(store.get(scan.id)!, { ...this.deps, now: this.now }, signals);
    this.walking = { id: scan.id, walk };
    try {
      await walk.run();
    } finally {
      this.walking = undefined;
    }
    if (scan.spec.options.dryRun !== true) store.markWalkDone(scan.id, 'awaiting_results');
  }

  /** The ETA's denominator, counted off the event loop; the walk does not wait for it. */
  private countRowsFor(id: string, log: Logger): void {
    const { replica, store } = this.deps;
    const count = countReplicaRows(replica.path)
      .then((rows) => store.setReplicaRows(id, rows))
      .catch((err: unknown) => log.warn({ err }, 'counting the replica rows failed; the scan shows no ETA'))
      .finally(() => this.counts.delete(count));
    this.counts.add(count);
  }

  /** The replica must reflect at least what the changelog held when the scan started. */
  private async waitForReplica(signal: AbortSignal): Promise<void> {
    const { replicaProgress, replicaCatchUpTimeoutMs } = this.deps;
    const deadline = Date.now() + replicaCatchUpTimeoutMs;
    for (;;) {
      try {
        const ends = await replicaProgress.currentEnds();
        return await replicaProgress.waitFor(ends, Math.max(0, deadline - Date.now()), signal);
      } catch (err) {
        if (err instanceof ScannerError || err instanceof AbortedError || Date.now() >= deadline) throw err;
        this.deps.logger.warn({ err }, 'reading the changelog end offsets failed; retrying');
        await sleep(1_000, signal);
      }
    }
  }

  private async awaitResults(id: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      const scan = this.deps.store.get(id)!;
      if (scan.inflight === null && scan.resolved >= scan.emitted) return;
      await this.wake.wait(1_000, signal);
      if (signal.aborted) throw new AbortedError('aborted');
    }
  }
}

/** The longest delay one timer takes (2^31-1 ms, about 24.8 days); longer ones are waited in steps. */
const MAX_TIMER_MS = 2_147_483_647;

/** A signal that aborts `ms` from now (at once when ms <= 0; never when Infinity), and its clean-up. */
function deadlineSignal(ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = (left: number) => {
    if (left <= 0) return controller.abort();
    if (!Number.isFinite(left)) return;
    timer = setTimeout(() => arm(left - Math.min(left, MAX_TIMER_MS)), Math.min(left, MAX_TIMER_MS));
    timer.unref();
  };
  arm(ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** `24 h`, `90 min`, `45 s`: a limit as the failed scan's message says it. */
function durationText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1_000} s`;
}
