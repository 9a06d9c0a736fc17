/** One committed unit of work of one task (a partition): when its transaction committed (epoch ms). */
export interface TaskCommit {
  task: number;
  committedAt: number;
}

/** The longest time one task went without a commit, in a window. */
export interface CommitGap {
  task: number;
  ms: number;
  /** The commit the gap began at and the one it ended at (or the window's edge, see `open`). */
  from: number;
  to: number;
  /** The task committed nothing from `from` to the window's end: the gap is cut there, not closed. */
  open: boolean;
}

/**
 * For each of `tasks`, the longest gap between two consecutive commits of the task that overlaps
 * [from, to]. A task with no commit at or before `from` counts from `from`; one with none at or
 * after `to` counts to `to` (an open gap). Pure: the caller chooses which commits count (e.g.
 * those that carried events).
 */
export function longestCommitGaps(commits: TaskCommit[], tasks: number[], from: number, to: number): CommitGap[] {
  return tasks.map((task) => {
    const times = commits
      .filter((c) => c.task === task)
      .map((c) => c.committedAt)
      .sort((a, b) => a - b);
    const before = times.filter((t) => t <= from).at(-1) ?? from;
    const after = times.find((t) => t >= to);
    const edges = [before, ...times.filter((t) => t > from && t < to), after ?? to];
    let longest: CommitGap = { task, ms: 0, from: before, to: before, open: false };
    for (let i = 1; i < edges.length; i++) {
      const ms = edges[i]! - edges[i - 1]!;
      if (ms > longest.ms)
        longest = { task, ms, from: edges[i - 1]!, to: edges[i]!, open: i === edges.length - 1 && after === undefined };
    }
    return longest;
  });
}
