import type { Logger } from 'pino';
import type { ScanStore } from './scan-store';
import { yieldToEventLoop } from './wait';

export interface ScanRowsRetentionOptions {
  /** Rows of scans finished longer ago than this go (SCAN_ROWS_MAX_AGE_MS). */
  maxAgeMs: number;
  /** Rows are kept for the newest this many finished scans at most (SCAN_ROWS_MAX_SCANS). */
  maxScans: number;
  /** How often retention runs, besides at start (SCAN_ROWS_PRUNE_INTERVAL_MS). */
  intervalMs: number;
  /** Rows deleted per statement: each is short, and the event loop runs between them. */
  batchRows?: number;
  now?: () => number;
}

/**
 * Bounds scans.sqlite: a finished scan's per-command rows (`scan_commands`, `results`) go once it is
 * past retention; its summary (the scans row, its counts and results per outcome) stays. A running
 * scan's rows are never touched: resuming and result matching need them.
 */
export class ScanRowsRetention {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(
    private readonly store: Pick<ScanStore, 'prunableScans' | 'commands'>,
    private readonly logger: Logger,
    private readonly options: ScanRowsRetentionOptions,
  ) {}

  /** Runs now and every intervalMs, one run at a time. */
  start(): void {
    if (this.timer || this.stopped) return;
    const run = () => {
      this.running ??= this.prune()
        .catch((err: unknown) => this.logger.error({ err }, 'pruning finished scans’ rows failed; retried later'))
        .finally(() => (this.running = undefined));
    };
    run();
    this.timer = setInterval(run, this.options.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a run in progress, which ends at its next batch. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** Drops the rows of every finished scan past retention; returns how many scans and rows. */
  async prune(): Promise<{ scans: number; rows: number }> {
    const { maxAgeMs, maxScans, batchRows = 5_000 } = this.options;
    const now = (this.options.now ?? Date.now)();
    const ids = this.store.prunableScans(now - maxAgeMs, maxScans);
    let rows = 0;
    let scans = 0;
    for (const id of ids) {
      for (let n = -1; n !== 0 && !this.stopped;) {
        n = this.store.commands.dropRows(id, batchRows);
        rows += n;
        await yieldToEventLoop();
      }
      if (this.stopped) break;
      scans++;
    }
    if (rows > 0)
      this.logger.info({ scans, rows, maxAgeMs, maxScans }, 'pruned finished scans’ command and result rows');
    return { scans, rows };
  }
}
