import type { UpdateCommand } from '@state-relay/contracts';
import { boundedSlices, MAX_REQUEST_BYTES } from '@state-relay/kafka-runtime';
import type { ReplicaStore } from '@state-relay/store';
import type { Logger } from 'pino';
import type { CommandSink } from './command-sender';
import { AbortedError, isRetriable } from '../errors';
import type { ScannerMetrics } from '../metrics';
import type { InflightChunk, ScanRecord } from './scan';
import {
  buildCommand,
  chunkLimit,
  commandSizer,
  commandsPerBatch,
  COMMANDS_PER_REQUEST,
  emissionBudget,
  prefilterFor,
  selectMatches,
} from './scan-plan';
import type { ChunkProgress, ScanStore } from './scan-store';
import { CommandPacer, type CommandPacerOptions, type LatencySignal, type PaceState } from './command-pacer';
import type { LatencyBudget } from './latency-budget';
import { TokenBucket } from './token-bucket';
import { sleep, yieldToEventLoop } from './wait';

export interface WalkDeps {
  store: ScanStore;
  replica: Pick<ReplicaStore, 'chunk'>;
  sink: CommandSink;
  commandLag: { lag(): Promise<number> };
  metrics: Pick<ScannerMetrics, 'rowsScanned' | 'rowsMatched' | 'commandsEmitted' | 'backoffSeconds'>;
  logger: Logger;
  chunkSize: number;
  maxCommandLag: number;
  now: () => number;
  /** How long a retriable send failure is retried before the scan fails; default 5 minutes. */
  sendRetryWindowMs?: number;
  /** How often the command lag is re-read while backing off; default 250 ms. */
  backoffPollMs?: number;
  /** Commands gathered per batch (recorded, sent, committed together); default COMMANDS_PER_BATCH. */
  commandsPerBatch?: number;
  /** Paces the commands by the events' latency; without it a walk still ramps from a low rate to its cap. */
  pacing?: WalkPacing;
}

/** What paces a walk: the processors' event latency and the budget it is held to (issue 32). */
export interface WalkPacing {
  signal: LatencySignal & { baseline(): number | null };
  /** SCAN_LATENCY_BUDGET: the budget of a scan without options.latencyBudget. */
  defaultBudget: LatencyBudget;
  /** The pacer's clock (monotonic ms); default performance.now. */
  now?: () => number;
  /** The pacer's start rate, floor, window and step (tests shorten them). */
  tuning?: Pick<CommandPacerOptions, 'startRate' | 'floor' | 'windowMs' | 'stepMs'>;
}

const NO_READINGS = { latest: () => undefined, baseline: () => null };

/** The cursor is persisted at least every this many keys, even when nothing matches. */
const MAX_KEYS_PER_BATCH = 100_000;

interface CollectedBatch {
  /** Last key walked; null when nothing was left to walk. */
  toKey: string | null;
  walked: number;
  matched: number;
  commands: UpdateCommand[];
  /** The replica ended during this batch. */
  exhausted: boolean;
}

export interface WalkSignals {
  /** Aborts on a cancel or a stop. */
  any: AbortSignal;
  /** Aborts on a cancel only: a cancelled chunk is committed as far as it was sent. */
  cancel: AbortSignal;
}

/**
 * One scan's walk: keyset chunks of the replica in key order, each pre-filtered in SQL, re-checked
 * with the rules package, and emitted as one command per match. A chunk's commands are recorded
 * before they are sent and its cursor after, so a scanner killed mid-chunk re-sends exactly that
 * chunk (same command ids: the processor answers `duplicate` for what it already applied).
 */
export class ScanWalk {
  private readonly bucket?: TokenBucket;
  /** Sets the bucket's rate under the scan's `rate` cap; absent on a dry run, which emits nothing. */
  private readonly pacer?: CommandPacer;
  private readonly log: Logger;
  private cursor: string | null;
  private readonly seen: { scanned: number; matched: number };
  private emitted: number;
  private readonly recordBytes: (key: string) => number;

  constructor(
    private readonly scan: ScanRecord,
    private readonly deps: WalkDeps,
    private readonly signals: WalkSignals,
  ) {
    const { rate = 0, dryRun, latencyBudget } = scan.spec.options;
    if (dryRun !== true) {
      const pacing = deps.pacing;
      const budget = latencyBudget ?? pacing?.defaultBudget ?? { off: true };
      const signal = pacing?.signal ?? NO_READINGS;
      this.pacer = new CommandPacer({
        ...pacing?.tuning,
        cap: rate > 0 ? rate : Infinity,
        budget,
        // Measured before the first command, from the readings the scanner already has.
        baselineP99Ms: budget.ratio !== undefined ? signal.baseline() : null,
        signal,
        now: pacing?.now ?? (() => performance.now()),
      });
      this.bucket = new TokenBucket(this.pacer.state().rate);
    }
    this.log = deps.logger.child({ scanId: scan.id });
    this.cursor = scan.cursor;
    this.seen = { scanned: scan.scanned, matched: scan.matched };
    this.emitted = scan.emitted;
    this.recordBytes = commandSizer(scan);
  }

  /** The rate the pacer allows now and what limits it; null on a dry run. */
  pace(): PaceState | null {
    return this.pacer?.state() ?? null;
  }

  /** Takes in the latest latency reading and gives the bucket the pacer's rate. */
  private paceNow(): number {
    const rate = this.pacer!.update();
    if (rate !== this.bucket!.ratePerSecond) this.bucket!.setRate(rate);
    return rate;
  }

  /** Walks to the end of the replica (or to maxCommands); throws AbortedError on cancel or stop. */
  async run(): Promise<void> {
    const { scan } = this;
    if (scan.inflight !== null) await this.resendInflight(scan.inflight);
    const filter = prefilterFor(scan.spec.condition, scan.asOf);
    for (;;) {
      this.throwIfAborted();
      if (this.budgetSpent()) return;
      if (scan.spec.options.dryRun !== true) await this.backOffWhileLagging();
      const started = performance.now();
      const batch = await this.collect(filter);
      // Cancelled or stopping while walking: drop what was gathered; the cursor has not moved.
      this.throwIfAborted();
      if (batch.toKey === null) return;
      await this.emitBatch(batch.toKey, batch.walked, batch.matched, batch.commands, started);
      if (batch.exhausted) return;
      await yieldToEventLoop();
    }
  }

  /**
   * Walks chunks after the cursor until they hold a batch's worth of commands (never more; a chunk
   * that would bring more is walked again over fewer keys), the budget is spent, or the replica
   * ends; yields between chunks. See DECISIONS.md, "Batches of about a second".
   */
  private async collect(filter: ReturnType<typeof prefilterFor>): Promise<CollectedBatch> {
    const { scan, deps } = this;
    const { options, condition } = scan.spec;
    // About a second of the paced rate: the cursor moves about every second, whatever the rate.
    const target = commandsPerBatch(options, deps.commandsPerBatch, this.pacer ? this.paceNow() : undefined);
    const batch: CollectedBatch = { toKey: null, walked: 0, matched: 0, commands: [], exhausted: false };
    for (;;) {
      const seen = { scanned: this.seen.scanned + batch.walked, matched: this.seen.matched + batch.matched };
      const room = target - batch.commands.length;
      let limit = chunkLimit(options, deps.chunkSize, seen);
      // Near a full batch, walk about the keys the room needs at the match ratio seen so far, so
      // the overflowing chunk below is rarely read twice.
      if (options.dryRun !== true && seen.matched > 0)
        limit = Math.min(limit, Math.max(1, Math.ceil(((room * seen.scanned) / seen.matched) * 1.25)));
      let chunk: ReturnType<WalkDeps['replica']['chunk']>;
      let matches: ReturnType<typeof selectMatches>;
      let take: number;
      for (;;) {
        chunk = deps.replica.chunk({ afterKey: batch.toKey ?? this.cursor, limit, ...filter });
        if (chunk.lastKey === null) return { ...batch, exhausted: true };
        matches = selectMatches(chunk.rows, condition, scan.asOf);
        take = emissionBudget(options, this.emitted + batch.commands.length, matches.length);
        if (take <= room || limit === 1) break;
        // More commands than the batch has room for: about the share of the keys that fits.
        limit = Math.max(1, Math.min(limit - 1, Math.floor((limit * room) / take)));
      }
      const issuedAt = deps.now();
      for (const row of matches.slice(0, take)) batch.commands.push(buildCommand(scan, row.key, row.version, issuedAt));
      batch.toKey = chunk.lastKey;
      batch.walked += chunk.walked;
      batch.matched += matches.length;
      const full = batch.commands.length >= target || batch.walked >= MAX_KEYS_PER_BATCH;
      const spent = take < matches.length || this.budgetSpent(batch.commands.length);
      if (full || spent || this.signals.any.aborted) return batch;
      await yieldToEventLoop();
    }
  }

  private budgetSpent(collected = 0): boolean {
    const { dryRun, maxCommands } = this.scan.spec.options;
    return dryRun !== true && maxCommands !== undefined && this.emitted + collected >= maxCommands;
  }

  /** Records a batch (commands and extent), sends it, then moves the cursor past it. */
  private async emitBatch(
    toKey: string,
    walked: number,
    matched: number,
    commands: UpdateCommand[],
    started: number,
  ): Promise<void> {
    const extent = { toKey, walked, matched };
    let batch = commands;
    let inflight: InflightChunk = { ...extent, commands: 0, sent: 0 };
    if (commands.length > 0) {
      const planned = commands.map((c) => ({ key: c.key, expectedVersion: c.expectedVersion }));
      const fresh = this.deps.store.beginChunk(this.scan.id, extent, planned);
      // A key recorded before belongs to an earlier batch: it is neither sent nor counted again.
      if (fresh.length < commands.length) {
        const isFresh = new Set(fresh);
        batch = commands.filter((c) => isFresh.has(c.key));
      }
      inflight = { ...extent, commands: batch.length, sent: 0 };
    }
    await this.sendAll(batch, inflight, (kept, withdrawn) => {
      // Cancelled or refused mid-batch: keep every command that may have arrived, forget the rest.
      const progress = { cursor: toKey, walked, matched, walkMs: performance.now() - started };
      this.commit(progress, keysFrom(batch, kept), withdrawn);
    });
    this.commit({ cursor: toKey, walked, matched, walkMs: performance.now() - started });
  }

  private commit(progress: ChunkProgress, unsent: string[] = [], withdrawn = 0): void {
    this.deps.store.commitChunk(this.scan.id, progress, unsent, withdrawn);
    this.emitted -= withdrawn;
    this.cursor = progress.cursor;
    this.seen.scanned += progress.walked;
    this.seen.matched += progress.matched;
    this.deps.metrics.rowsScanned.inc(progress.walked);
    this.deps.metrics.rowsMatched.inc(progress.matched);
  }

  /**
   * After a crash or stop mid-batch: send the recorded commands of that batch again (all of them:
   * those already counted may not have arrived), then commit it. Those counted before are not
   * counted again.
   */
  private async resendInflight(inflight: InflightChunk): Promise<void> {
    const { scan, deps } = this;
    const planned = deps.store.commands.chunk(scan.id, scan.cursor, inflight.toKey);
    const issuedAt = deps.now();
    // expectedVersion was recorded whenever options.expectVersion asked for it.
    const commands = planned.map((p) => buildCommand(scan, p.key, p.expectedVersion ?? 0, issuedAt));
    this.log.info(
      { commands: commands.length, alreadyCounted: inflight.sent, toKey: inflight.toKey },
      'resending the batch that was in flight when the scanner stopped',
    );
    const started = performance.now();
    const progress = { cursor: inflight.toKey, walked: inflight.walked, matched: inflight.matched };
    const batch = { ...inflight, commands: commands.length, sent: Math.min(inflight.sent, commands.length) };
    await this.sendAll(commands, batch, (kept, withdrawn) => {
      this.commit({ ...progress, walkMs: performance.now() - started }, keysFrom(commands, kept), withdrawn);
    });
    this.commit({ ...progress, walkMs: performance.now() - started });
  }

  /**
   * Sends a batch in requests bounded by COMMANDS_PER_REQUEST and MAX_REQUEST_BYTES (paced,
   * about a tenth of a second each), counting each command as emitted just before its first send.
   * On cancel `onAbandon` keeps what was counted; on a refusal it withdraws this request's and
   * later counts; on stop the batch stays in flight. See DECISIONS.md, "Counted before sent".
   */
  private async sendAll(
    commands: UpdateCommand[],
    inflight: InflightChunk,
    onAbandon: (kept: number, withdrawn: number) => void,
  ): Promise<void> {
    const countedBefore = inflight.sent;
    let sent = 0;
    try {
      while (sent < commands.length) {
        this.throwIfAborted();
        const part = this.nextRequest(commands, sent);
        if (this.bucket) await sleep(this.bucket.take(part.length), this.signals.any);
        this.throwIfAborted();
        const uncounted = sent + part.length - inflight.sent;
        if (uncounted > 0) {
          inflight.sent += uncounted;
          this.deps.store.markSent(this.scan.id, inflight, uncounted);
          this.emitted += uncounted;
        }
        try {
          await this.sendWithRetry(part);
        } catch (err) {
          if (err instanceof AbortedError || isRetriable(err)) throw err;
          // Refused, not lost in transit: this request's commands were not delivered (a broker can
          // still have taken other partitions' batches of it; their results are then ignored).
          const kept = Math.max(sent, countedBefore);
          onAbandon(kept, inflight.sent - kept);
          throw err;
        }
        sent += part.length;
        this.deps.metrics.commandsEmitted.inc(part.length);
      }
    } catch (err) {
      if (err instanceof AbortedError && this.signals.cancel.aborted) onAbandon(inflight.sent, 0);
      throw err;
    }
  }

  /**
   * The next request from `commands[from]` on: about a tenth of a second of the rate paced now (as
   * much as the bucket holds), sized afresh each time so a cut mid-batch takes effect at once.
   */
  private nextRequest(commands: UpdateCommand[], from: number): UpdateCommand[] {
    const rate = this.pacer ? this.paceNow() : Infinity;
    const maxCount = Math.min(COMMANDS_PER_REQUEST, Math.max(1, Math.ceil(rate / 10)));
    const next = commands.slice(from, from + maxCount);
    return boundedSlices(next, (c) => this.recordBytes(c.key), { maxBytes: MAX_REQUEST_BYTES, maxCount }).next().value!;
  }

  private async sendWithRetry(commands: UpdateCommand[]): Promise<void> {
    const deadline = Date.now() + (this.deps.sendRetryWindowMs ?? 300_000);
    let delay = 250;
    for (;;) {
      try {
        return await this.deps.sink.send(commands);
      } catch (err) {
        if (!isRetriable(err) || Date.now() + delay > deadline) throw err;
        this.log.warn({ err, retryInMs: delay }, 'sending commands failed; retrying (command ids make re-sends safe)');
        await sleep(delay, this.signals.any);
        delay = Math.min(delay * 2, 10_000);
      }
    }
  }

  /** Waits while the processor is more than maxCommandLag commands behind; the time is added to the scan. */
  private async backOffWhileLagging(): Promise<void> {
    const { deps } = this;
    if ((await this.commandLag()) <= deps.maxCommandLag) return;
    const started = performance.now();
    this.pacer?.congested(); // a safety net: the pacer cuts the rate as for a budget breach
    this.log.info({ maxCommandLag: deps.maxCommandLag }, 'processor is behind on commands; backing off');
    try {
      do await sleep(deps.backoffPollMs ?? 250, this.signals.any);
      while ((await this.commandLag()) > deps.maxCommandLag);
    } finally {
      const ms = performance.now() - started;
      deps.store.addBackoff(this.scan.id, ms);
      deps.metrics.backoffSeconds.inc(ms / 1000);
    }
  }

  /** A failed reading does not stall the scan: the back-off protects the processor, it is not a gate. */
  private async commandLag(): Promise<number> {
    try {
      return await this.deps.commandLag.lag();
    } catch (err) {
      this.log.warn({ err }, 'reading the processor’s command lag failed; not backing off');
      return 0;
    }
  }

  private throwIfAborted(): void {
    if (this.signals.any.aborted) throw new AbortedError('aborted');
  }
}

/** The keys of `commands` from index `from` on: a cancelled batch's commands never handed out. */
function keysFrom(commands: readonly UpdateCommand[], from: number): string[] {
  return commands.slice(from).map((c) => c.key);
}
