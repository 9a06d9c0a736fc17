/** A task restoring its store now: records applied so far and changelog offsets still to go. */
export interface RestoreInProgress {
  task: number;
  restored: number;
  /** Changelog offsets between the restore's position and the end it restores to (compaction may leave fewer records). */
  toGo: number;
  startedAt: number;
}

/** The last restore a task finished (or gave up on). */
export interface RestoreDone {
  task: number;
  restored: number;
  ms: number;
  finishedAt: number;
  ok: boolean;
}

/**
 * What the restores of this instance's tasks are doing, for the status page: the lifecycle
 * reports each step; nothing here touches Kafka or SQLite.
 */
export class RestoreProgress {
  private readonly running = new Map<number, RestoreInProgress & { position: bigint; end: bigint }>();
  private readonly done = new Map<number, RestoreDone>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A restore of `task` from `from` (null: from the log start) to `end` begins. */
  begin(task: number, from: bigint | null, end: bigint): void {
    const position = from ?? 0n;
    this.running.set(task, { task, restored: 0, toGo: toGo(position, end), startedAt: this.now(), position, end });
  }

  /** `records` more were applied; the restore of `task` now stands at `next`. */
  applied(task: number, records: number, next: bigint): void {
    const r = this.running.get(task);
    if (!r) return;
    r.restored += records;
    r.position = next;
    r.toGo = toGo(next, r.end);
  }

  finish(task: number, ok: boolean): void {
    const r = this.running.get(task);
    if (!r) return;
    this.running.delete(task);
    const finishedAt = this.now();
    this.done.set(task, { task, restored: r.restored, ms: finishedAt - r.startedAt, finishedAt, ok });
  }

  /** Restores in progress and the last finished one per task, in task order; `tasks` keeps only those. */
  view(tasks?: readonly number[]): { inProgress: RestoreInProgress[]; last: RestoreDone[] } {
    const keep = (t: number) => tasks === undefined || tasks.includes(t);
    const byTask = <T extends { task: number }>(a: T, b: T) => a.task - b.task;
    return {
      inProgress: [...this.running.values()]
        .filter((r) => keep(r.task))
        .map(({ task, restored, toGo, startedAt }) => ({ task, restored, toGo, startedAt }))
        .sort(byTask),
      last: [...this.done.values()].filter((r) => keep(r.task)).sort(byTask),
    };
  }
}

const toGo = (position: bigint, end: bigint) => Number(end > position ? end - position : 0n);
