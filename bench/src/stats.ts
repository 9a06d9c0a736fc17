import type { BatchReport } from './children/processor-child';
import type { TransactionTiming } from './children/transaction-timing';

/** The processor's transactions in a window: how many per second and where their time went. */
export interface TransactionSummary {
  perSec: number;
  total: LatencySummary;
  send: LatencySummary;
  offsets: LatencySummary;
  commit: LatencySummary;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function summarize(values: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(values).sort();
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
  };
}

/**
 * Every committed event batch of one processor, as the child reported them: commit time,
 * task, size, and each event's produce -> commit latency (ms).
 */
export class CommitLog {
  readonly committedAt: number[] = [];
  readonly task: number[] = [];
  readonly records: number[] = [];
  /** Index into `latency` of each batch's first event. */
  readonly firstEvent: number[] = [];
  readonly latency: number[] = [];
  readonly commandCommittedAt: number[] = [];
  readonly commandRecords: number[] = [];
  readonly batchMs: number[] = [];
  readonly transactions: TransactionTiming[] = [];

  add(r: BatchReport): void {
    for (const t of r.transactions) this.transactions.push(t);
    let at = this.latency.length;
    for (let i = 0; i < r.committedAt.length; i++) {
      this.committedAt.push(r.committedAt[i]!);
      this.task.push(r.task[i]!);
      this.records.push(r.records[i]!);
      this.firstEvent.push(at);
      at += r.records[i]!;
    }
    for (const l of r.latency) this.latency.push(l);
    for (let i = 0; i < r.commandCommittedAt.length; i++) {
      this.commandCommittedAt.push(r.commandCommittedAt[i]!);
      this.commandRecords.push(r.commandRecords[i]!);
    }
    for (const b of r.batchMs) this.batchMs.push(b);
  }

  get events(): number {
    return this.latency.length;
  }

  /** Latencies of the events whose batch committed in [from, to). */
  latenciesBetween(from: number, to: number): number[] {
    const out: number[] = [];
    for (let b = 0; b < this.committedAt.length; b++) {
      const t = this.committedAt[b]!;
      if (t < from || t >= to) continue;
      const first = this.firstEvent[b]!;
      for (let i = first; i < first + this.records[b]!; i++) out.push(this.latency[i]!);
    }
    return out;
  }

  /**
   * Latencies of the events in flight at some point of [from, to]: produced (commit time minus
   * latency) at or before `to` and committed at or after `from`. An event stuck behind a stall
   * that began before it was produced counts, and so does one produced just before the stall.
   */
  latenciesOverlapping(from: number, to: number): number[] {
    const out: number[] = [];
    for (let b = 0; b < this.committedAt.length; b++) {
      const t = this.committedAt[b]!;
      if (t < from) continue;
      const first = this.firstEvent[b]!;
      for (let i = first; i < first + this.records[b]!; i++) if (t - this.latency[i]! <= to) out.push(this.latency[i]!);
    }
    return out;
  }

  /** The transactions that ended in [from, to). */
  transactionsBetween(from: number, to: number): TransactionSummary {
    const txs = this.transactions.filter((t) => t.endedAt >= from && t.endedAt < to);
    return {
      perSec: (txs.length * 1000) / Math.max(1, to - from),
      total: summarize(txs.map((t) => t.total)),
      send: summarize(txs.map((t) => t.send)),
      offsets: summarize(txs.map((t) => t.offsets)),
      commit: summarize(txs.map((t) => t.commit)),
    };
  }

  /** Events committed in [from, to). */
  eventsBetween(from: number, to: number): number {
    let n = 0;
    for (let b = 0; b < this.committedAt.length; b++)
      if (this.committedAt[b]! >= from && this.committedAt[b]! < to) n += this.records[b]!;
    return n;
  }

  /**
   * The longest time between two consecutive event commits (any task) among the commits
   * around [from, to]: with a steady load events are always pending, so a gap is a stall.
   * With `perTask`, the longest such gap of any single task instead.
   */
  longestGap(from: number, to: number, perTask = false): number {
    const byTask = new Map<number, number[]>();
    for (let b = 0; b < this.committedAt.length; b++) {
      const key = perTask ? this.task[b]! : -1;
      if (!byTask.has(key)) byTask.set(key, []);
      byTask.get(key)!.push(this.committedAt[b]!);
    }
    let longest = 0;
    for (const times of byTask.values()) {
      times.sort((a, b) => a - b);
      for (let i = 1; i < times.length; i++) {
        // The interval between two commits counts if it overlaps the window.
        if (times[i - 1]! < to && times[i]! > from) longest = Math.max(longest, times[i]! - times[i - 1]!);
      }
    }
    return longest;
  }

  /** Per time bucket from `origin`: p50, p99 and max latency of the events committed in it. */
  buckets(
    origin: number,
    end: number,
    bucketMs: number,
  ): Array<{ t: number; p50: number; p99: number; max: number; n: number }> {
    const count = Math.max(0, Math.ceil((end - origin) / bucketMs));
    const lists: number[][] = Array.from({ length: count }, () => []);
    for (let b = 0; b < this.committedAt.length; b++) {
      const slot = Math.floor((this.committedAt[b]! - origin) / bucketMs);
      if (slot < 0 || slot >= count) continue;
      const first = this.firstEvent[b]!;
      for (let i = first; i < first + this.records[b]!; i++) lists[slot]!.push(this.latency[i]!);
    }
    return lists.map((l, i) => {
      const s = summarize(l);
      return { t: (i * bucketMs) / 1000, p50: s.p50, p99: s.p99, max: s.max, n: s.count };
    });
  }
}
