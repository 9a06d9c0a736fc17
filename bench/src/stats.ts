import type { CommitEntry, CommitsReport } from './children/processor-child';
import type { AbortedTransaction, TransactionTiming } from './children/transaction-timing';
import { LatencyHistogram, type LatencySummary } from './lib';

export type { LatencySummary } from './lib';

/** The processor's transactions in a window: how many per second and where their time went. */
export interface TransactionSummary {
  /** Committed transactions per second, all tasks together. */
  perSec: number;
  /** Committed transactions per second of each task: the mean over the tasks, the slowest and the fastest task. */
  perTask: { mean: number; min: number; max: number };
  /** Transactions that ended in abort and had sent something (failed commits); fences are not counted. */
  failed: number;
  /** Fences (begin + abort with nothing sent: initTaskProducer's InitProducerId). */
  fences: number;
  total: LatencySummary;
  send: LatencySummary;
  offsets: LatencySummary;
  commit: LatencySummary;
  /** The processor's view of the same commits (onCommit): begin → Kafka commit, and the SQLite flush after it. */
  commitMs: LatencySummary;
  flushMs: LatencySummary;
  /** The task producers' requests per committed transaction, by API, and their mean round trip (ms). */
  requests: Array<{ api: string; perTransaction: number; meanMs: number }>;
  /** The processor's fetch loop: fetches per second, their duration, the longest time between two fetch starts. */
  fetch: { perSec: number; ms: LatencySummary; longestGapMs: number };
  /** The processor's event-loop delay (ms): the highest per-250-ms p99, and the maximum. */
  loopDelay: { p99: number; max: number };
}

/** count, p50, p99 and max of `values` (ms), through the shared latency histogram. */
export function summarize(values: Iterable<number>): LatencySummary {
  return LatencyHistogram.of(values).summary();
}

/** The longest stall of one task (or of all tasks together) in a window. */
export interface Stall {
  ms: number;
  /** The stalled task (-1: all tasks together). */
  task: number;
  /** When the stall began and ended (epoch ms). */
  from: number;
  to: number;
}

/**
 * Every committed transaction of one processor, as the child reported them (one per task per
 * commit interval): commit time, task, what it carried, and, when `eventLatencies`, each
 * event's and command's produce -> commit latency (ms). Those are kept per event because the
 * windows a sweep phase is judged on (the baseline before the sweep's start, the events in
 * flight during it) are known only once the sweep has ended: a phase holds rate × its length
 * of them (about 130,000 at the default settings), released with it.
 */
export class CommitLog {
  readonly commits: CommitEntry[] = [];
  /** Index into `latency` of each commit's first event. */
  readonly firstEvent: number[] = [];
  readonly latency: number[] = [];
  readonly commandLatency: number[] = [];
  private eventCount = 0;
  readonly transactions: TransactionTiming[] = [];
  readonly aborted: AbortedTransaction[] = [];
  readonly requests: Array<CommitsReport['requests']> = [];
  readonly fetches: Array<[number, number]> = [];
  readonly loopDelay: Array<CommitsReport['loopDelay']> = [];

  constructor(private readonly eventLatencies: boolean) {}

  add(r: CommitsReport): void {
    for (const t of r.transactions) this.transactions.push(t);
    if (Object.keys(r.requests.byApi).length > 0) this.requests.push(r.requests);
    for (const f of r.fetches) this.fetches.push(f);
    if (r.loopDelay.at > 0) this.loopDelay.push(r.loopDelay);
    for (const a of r.aborted) this.aborted.push(a);
    for (const c of r.commits) {
      this.commits.push({ ...c, oldestEvent: c.oldestEvent ?? NaN });
      this.firstEvent.push(this.eventCount);
      this.eventCount += c.events;
    }
    if (!this.eventLatencies) return;
    for (const l of r.latency) this.latency.push(l);
    for (const l of r.commandLatency) this.commandLatency.push(l);
  }

  get events(): number {
    return this.eventCount;
  }

  /** The commits that carried events, in commit order. */
  eventCommits(): CommitEntry[] {
    return this.commits.filter((c) => c.events > 0).sort((a, b) => a.committedAt - b.committedAt);
  }

  private eventsOf(b: number): number[] {
    if (!this.eventLatencies) throw new Error('this commit log keeps no event latencies');
    const first = this.firstEvent[b]!;
    return this.latency.slice(first, first + this.commits[b]!.events);
  }

  /** Latencies of the events whose transaction committed in [from, to). */
  latenciesBetween(from: number, to: number): number[] {
    const out: number[] = [];
    this.commits.forEach((c, b) => {
      if (c.committedAt >= from && c.committedAt < to) for (const l of this.eventsOf(b)) out.push(l);
    });
    return out;
  }

  /**
   * Latencies of the events in flight at some point of [from, to]: produced (commit time minus
   * latency) at or before `to` and committed at or after `from`. An event stuck behind a stall
   * that began before it was produced counts, and so does one produced just before the stall.
   */
  latenciesOverlapping(from: number, to: number): number[] {
    const out: number[] = [];
    this.commits.forEach((c, b) => {
      if (c.committedAt < from) return;
      for (const l of this.eventsOf(b)) if (c.committedAt - l <= to) out.push(l);
    });
    return out;
  }

  /** The same for the update commands (the relay's): produce by the scanner -> commit. */
  commandLatenciesBetween(from: number, to: number): number[] {
    if (!this.eventLatencies) throw new Error('this commit log keeps no command latencies');
    const out: number[] = [];
    let at = 0;
    for (const c of this.commits) {
      if (c.committedAt >= from && c.committedAt < to) {
        for (let i = at; i < at + c.commands; i++) out.push(this.commandLatency[i]!);
      }
      at += c.commands;
    }
    return out;
  }

  /**
   * The transactions that ended in [from, to): per second (all tasks, and per task over
   * `tasks`), the kafkajs-level timing of each step, and the processor's commit and flush times.
   */
  transactionsBetween(from: number, to: number, tasks: number[]): TransactionSummary {
    const sec = Math.max(1, to - from) / 1000;
    const txs = this.transactions.filter((t) => t.endedAt >= from && t.endedAt < to);
    const commits = this.commits.filter((c) => c.committedAt >= from && c.committedAt < to);
    const perTask = tasks.map((task) => commits.filter((c) => c.task === task).length / sec);
    const aborted = this.aborted.filter((a) => a.endedAt >= from && a.endedAt < to);
    const byApi = new Map<string, { count: number; ms: number }>();
    // Reports come every 250 ms: one counts if it was sent inside the window.
    for (const r of this.requests) {
      if (r.at < from || r.at >= to) continue;
      for (const [api, { count, ms }] of Object.entries(r.byApi)) {
        const e = byApi.get(api) ?? { count: 0, ms: 0 };
        byApi.set(api, { count: e.count + count, ms: e.ms + ms });
      }
    }
    const fetchStarts = this.fetches.filter(([at]) => at >= from && at < to).sort((a, b) => a[0] - b[0]);
    const loop = this.loopDelay.filter((l) => l.at >= from && l.at < to);
    let longestFetchGap = 0;
    for (let i = 1; i < fetchStarts.length; i++)
      longestFetchGap = Math.max(longestFetchGap, fetchStarts[i]![0] - fetchStarts[i - 1]![0]);
    return {
      perSec: commits.length / sec,
      perTask: {
        mean: perTask.reduce((a, b) => a + b, 0) / Math.max(1, perTask.length),
        min: Math.min(...perTask),
        max: Math.max(...perTask),
      },
      failed: aborted.filter((a) => !a.empty).length,
      fences: aborted.filter((a) => a.empty).length,
      total: summarize(txs.map((t) => t.total)),
      send: summarize(txs.map((t) => t.send)),
      offsets: summarize(txs.map((t) => t.offsets)),
      commit: summarize(txs.map((t) => t.commit)),
      commitMs: summarize(commits.map((c) => c.committedAt - c.startedAt)),
      flushMs: summarize(commits.map((c) => c.flushedAt - c.committedAt)),
      requests: [...byApi]
        .sort((a, b) => b[1].count - a[1].count)
        .map(([api, { count, ms }]) => ({
          api,
          perTransaction: count / Math.max(1, txs.length),
          meanMs: ms / Math.max(1, count),
        })),
      fetch: {
        perSec: fetchStarts.length / sec,
        ms: summarize(fetchStarts.map(([, d]) => d)),
        longestGapMs: longestFetchGap,
      },
      loopDelay: { p99: Math.max(0, ...loop.map((l) => l.p99)), max: Math.max(0, ...loop.map((l) => l.max)) },
    };
  }

  /** Events committed in [from, to). */
  eventsBetween(from: number, to: number): number {
    let n = 0;
    for (const c of this.commits) if (c.committedAt >= from && c.committedAt < to) n += c.events;
    return n;
  }

  /**
   * The longest stall overlapping [from, to]: the time between two consecutive event commits
   * of one task (`perTask`) or of all tasks together, counted from the later of the earlier
   * commit and the produce time of the oldest event the later commit carried. So it is time
   * during which an event of that task was waiting and nothing of the task was committed; a
   * quiet spell with no event to process is not a stall.
   */
  longestStall(from: number, to: number, perTask: boolean): Stall {
    const byTask = new Map<number, CommitEntry[]>();
    for (const c of this.eventCommits()) {
      const key = perTask ? c.task : -1;
      if (!byTask.has(key)) byTask.set(key, []);
      byTask.get(key)!.push(c);
    }
    let longest: Stall = { ms: 0, task: -1, from: NaN, to: NaN };
    for (const [task, commits] of byTask) {
      for (let i = 1; i < commits.length; i++) {
        const cur = commits[i]!;
        const waitingFrom = Math.max(commits[i - 1]!.committedAt, cur.oldestEvent ?? NaN);
        const begin = Number.isFinite(waitingFrom) ? waitingFrom : commits[i - 1]!.committedAt;
        // The stall counts if it overlaps the window.
        if (begin < to && cur.committedAt > from && cur.committedAt - begin > longest.ms) {
          longest = { ms: cur.committedAt - begin, task, from: begin, to: cur.committedAt };
        }
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
    const commitsIn: number[][] = Array.from({ length: count }, () => []);
    this.commits.forEach((c, b) => {
      const slot = Math.floor((c.committedAt - origin) / bucketMs);
      if (slot >= 0 && slot < count) commitsIn[slot]!.push(b);
    });
    return commitsIn.map((commits, i) => {
      const s = summarize(commits.flatMap((b) => this.eventsOf(b)));
      return { t: (i * bucketMs) / 1000, p50: s.p50, p99: s.p99, max: s.max, n: s.count };
    });
  }
}
