import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import type { ScanView } from '../scans/scan-view';
import { escapeValue } from './escape';

/** A scan in one of these states changes no more. */
export const FINISHED: ReadonlySet<string> = new Set(['completed', 'cancelled', 'failed']);

/** Where progress goes: stdout, or a fake in tests. */
export interface ProgressOutput {
  write(text: string): void;
  readonly isTTY: boolean;
  readonly columns?: number;
}

/**
 * Shows a followed scan's progress. On a terminal: one line redrawn in place at every update.
 * Otherwise (a pipe, a CI log, a file) a carriage return would glue the updates into one long
 * line, so: one full line per update, at most one every `intervalMs`, and always the first and
 * the final one.
 */
export class ProgressReporter {
  private lastPrinted = -Infinity;
  private drawn = false;

  constructor(
    private readonly out: ProgressOutput,
    private readonly intervalMs = 2_000,
    private readonly now: () => number = Date.now,
  ) {}

  update(scan: ScanView): void {
    // Its own \r and erase sequence only: what came from the server is made visible.
    const line = escapeValue(progressLine(scan));
    if (this.out.isTTY) {
      const width = Math.max(20, (this.out.columns ?? 120) - 1);
      this.out.write(`\r\x1b[2K${line.slice(0, width)}`);
      this.drawn = true;
      return;
    }
    const at = this.now();
    if (at - this.lastPrinted < this.intervalMs && !FINISHED.has(scan.status)) return;
    this.out.write(`${line}\n`);
    this.lastPrinted = at;
  }

  /** Ends the redrawn line on a terminal, so what follows starts on a line of its own. */
  end(): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }
}

/** One line of progress: a bar for the walk, then counts, then results, then the ETA. */
export function progressLine(scan: ScanView, barWidth = 24): string {
  const fraction = scan.progress.fraction ?? 0;
  const filled = Math.round(fraction * barWidth);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}]`;
  const pct = `${Math.floor(fraction * 100)}`.padStart(3);
  const { scanned, matched, emitted, pending } = scan.counts;
  const rows = scan.progress.replicaRows === null ? `${scanned}` : `${scanned}/${scan.progress.replicaRows}`;
  const state = scan.phase === null ? scan.status : `${scan.status}:${scan.phase}`;
  const eta = scan.progress.etaSeconds === null ? '' : ` eta ${formatSeconds(scan.progress.etaSeconds)}`;
  const pace = scan.pace === null ? '' : ` ${paceText(scan.pace)}`;
  return `${bar} ${pct}% ${state} scanned ${rows} matched ${matched} emitted ${emitted} awaiting ${pending}${pace}${eta}`;
}

/** `rate 812/s (budget)`: the paced rate and what limits it. */
export function paceText(pace: NonNullable<ScanView['pace']>): string {
  return `rate ${formatRate(pace.rate)}/s (${pace.limiter})`;
}

/** The pace in full: the rate, its limiter, and the event p99 against the budget. */
export function paceDetail(pace: NonNullable<ScanView['pace']>): string {
  const ms = (v: number | null) => (v === null ? '-' : `${v} ms`);
  const budget = pace.budgetP99Ms === null ? 'no budget' : `budget ${ms(pace.budgetP99Ms)}`;
  return `${paceText(pace)}, event p99 ${ms(pace.eventP99Ms)}, ${budget}, baseline ${ms(pace.baselineP99Ms)}`;
}

const formatRate = (rate: number) => (rate >= 100 ? String(Math.round(rate)) : String(Math.round(rate * 10) / 10));

/** The outcome counts, one per line, after the final status. */
export function summary(scan: ScanView): string {
  const lines = [
    `scan ${scan.id} ${scan.status}${scan.error ? `: ${escapeValue(scan.error)}` : ''}`,
    `  scanned ${scan.counts.scanned}, matched ${scan.counts.matched}, emitted ${scan.counts.emitted}, without result ${scan.counts.pending}`,
  ];
  for (const outcome of COMMAND_OUTCOMES) lines.push(`  ${outcome.padEnd(17)} ${scan.counts.results[outcome]}`);
  if (scan.backoffSeconds > 0)
    lines.push(`  backed off ${formatSeconds(scan.backoffSeconds)} (processor lag on commands)`);
  return lines.join('\n');
}

export function formatSeconds(s: number): string {
  if (s < 60) return `${Math.ceil(s)}s`;
  const m = Math.floor(s / 60);
  return m < 60
    ? `${m}m${String(Math.ceil(s % 60)).padStart(2, '0')}s`
    : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
