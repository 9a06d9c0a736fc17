import { join } from 'node:path';
import type { LoadChildConfig } from '../children/load-child';
import { AS_OF, log } from '../common';
import { createDeploymentTopics, newDeployment } from '../deployment';
import { Child } from '../ipc';
import { loadConfig, type Admin, type Kafka } from '../lib';
import { ProcessorRun, spanOf } from '../processor-run';
import { fillChangelog } from './fill';

/** Events/s while the failover is measured: every task gets events, so each commits every interval. */
const LOAD_RATE = 300;
const STEADY_MS = 5_000;

export interface FailoverPhases {
  /** kill -9 → the survivor joins the new generation: the dead member's session expiring, then the rebalance. */
  rejoinMs: number;
  /** Joined → restore of the moved tasks starts: fencing their producers (the dead one's open transactions aborted) and reading the changelog end. */
  fenceMs: number;
  /** The survivor's restore of the moved tasks (its log line), and the records it replayed. */
  restoreMs: number;
  restoreRecords: number;
  /** Restored → the last moved task's first commit. */
  firstCommitMs: number;
}

export interface FailoverResult {
  label: 'default' | 'short';
  sessionTimeoutMs: number;
  keys: number;
  movedTasks: number[];
  /** kill -9 → every moved task has committed a transaction on the survivor. */
  ms: number;
  /** kill -9 → each moved task's first commit on the survivor. */
  perTaskMs: Record<string, number>;
  phases: FailoverPhases;
  dominant: keyof FailoverPhases;
  /** The longest a task the survivor owned all along went without a commit, around the failover. */
  survivorStallMs: number;
}

/**
 * kill -9 of one of two processor instances (own state directories, as on two machines), under
 * a steady load, until its tasks commit again on the other; timed from the survivor's commits
 * (every committed transaction, with its task) and its log lines (group join, restore).
 */
export async function measureFailover(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  keys: number,
  label: FailoverResult['label'],
  o: { partitions: number; processorEnv: Record<string, string>; txRetryMs?: number },
  workDir: string,
): Promise<FailoverResult> {
  const env = { ...o.processorEnv, ...(label === 'short' ? { SESSION_TIMEOUT_MS: '6000' } : {}) };
  const sessionTimeoutMs = loadConfig({ KAFKA_BROKERS: brokers.join(','), ...env }).sessionTimeoutMs;
  const d = newDeployment(`failover-${label}`, o.partitions, workDir);
  await createDeploymentTopics(admin, d);
  await fillChangelog(kafka, d.changelogTopic, keys, { seed: 19 });
  const settings = { ...o, processorEnv: env };
  const t0 = Date.now();
  const survivor = new ProcessorRun(brokers, { ...d, stateDir: join(d.stateDir, 'a') }, settings);
  let victim: ProcessorRun | undefined;
  let load: Child | undefined;
  try {
    await survivor.ready();
    victim = new ProcessorRun(brokers, { ...d, stateDir: join(d.stateDir, 'b') }, settings);
    const split = (t: { owned: number[]; running: number[] }) =>
      t.owned.length > 0 && t.running.length === t.owned.length;
    await victim.waitTasks(split, 'the second instance running its share');
    await survivor.waitTasks(
      (t) => split(t) && t.owned.length + victim!.tasksNow.owned.length === o.partitions,
      'the first instance running the rest',
    );
    log(
      `failover (${label}): two instances running ${survivor.tasksNow.owned.length} + ${victim.tasksNow.owned.length} tasks, ${Date.now() - t0} ms after the first started`,
    );
    const loadConfigChild: LoadChildConfig = {
      brokers,
      topic: d.eventsTopic,
      rate: LOAD_RATE,
      spec: { seed: 11, keys, asOf: AS_OF },
    };
    load = Child.start('load', 'load-child', loadConfigChild);
    await load.next('started');
    await new Promise((r) => setTimeout(r, STEADY_MS));

    const moved = victim.tasksNow.owned;
    const kept = survivor.tasksNow.owned;
    log(
      `failover (${label} session, ${sessionTimeoutMs} ms): kill -9 of the instance owning tasks ${moved.join(', ')}`,
    );
    const killAt = Date.now();
    victim.child.kill();
    const firstCommit = await firstCommitsAfter(survivor, moved, killAt, sessionTimeoutMs + 180_000);
    const doneAt = Math.max(...firstCommit.values());
    const joined = survivor.joins.find((j) => j.at >= killAt);
    // Each moved task logs its own restore: from the first one's start to the last one's end.
    const lines = survivor.restores.filter((r) => r.at >= killAt && r.tasks.some((t) => moved.includes(t)));
    const restore = lines.length > 0 ? spanOf(lines) : undefined;
    const restoreStart = restore ? restore.at - restore.ms : NaN;
    const phases: FailoverPhases = {
      rejoinMs: (joined?.at ?? NaN) - killAt,
      fenceMs: restoreStart - (joined?.at ?? NaN),
      restoreMs: restore?.ms ?? NaN,
      restoreRecords: restore?.records ?? NaN,
      firstCommitMs: doneAt - (restore?.at ?? NaN),
    };
    const timed = ['rejoinMs', 'fenceMs', 'restoreMs', 'firstCommitMs'] as const;
    const dominant = timed.reduce((a, b) => ((phases[b] || 0) > (phases[a] || 0) ? b : a));
    log(`failover (${label}): tasks committing again on the survivor ${doneAt - killAt} ms after the kill`);
    return {
      label,
      sessionTimeoutMs,
      keys,
      movedTasks: moved,
      ms: doneAt - killAt,
      perTaskMs: Object.fromEntries([...firstCommit].map(([t, at]) => [String(t), at - killAt])),
      phases,
      dominant,
      survivorStallMs: longestGap(survivor, kept, killAt, doneAt),
    };
  } finally {
    load?.kill();
    victim?.child.kill();
    const stopping = Date.now();
    await survivor.stop().catch((err: unknown) => log(`failover (${label}): ${String(err)}`));
    log(`failover (${label}): survivor stopped in ${Date.now() - stopping} ms`);
    await admin
      .deleteTopics({ topics: [d.eventsTopic, d.commandsTopic, d.changelogTopic, d.resultsTopic, d.deadLetterTopic] })
      .catch(() => undefined);
  }
}

/** Each task's first commit on `proc` after `after` (epoch ms), waiting for all of them. */
async function firstCommitsAfter(
  proc: ProcessorRun,
  tasks: number[],
  after: number,
  timeoutMs: number,
): Promise<Map<number, number>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const first = new Map<number, number>();
    for (const c of proc.log.commits) {
      if (c.committedAt <= after || !tasks.includes(c.task)) continue;
      first.set(c.task, Math.min(first.get(c.task) ?? Infinity, c.committedAt));
    }
    if (first.size === tasks.length) return first;
    if (Date.now() > deadline)
      throw new Error(
        `failover: tasks ${tasks.filter((t) => !first.has(t)).join(', ')} did not commit in ${timeoutMs} ms`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The longest time between two commits of one of `tasks` spanning any part of [from, to]. */
function longestGap(proc: ProcessorRun, tasks: number[], from: number, to: number): number {
  let longest = 0;
  for (const task of tasks) {
    const times = proc.log.commits
      .filter((c) => c.task === task)
      .map((c) => c.committedAt)
      .sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) {
      if (times[i]! >= from && times[i - 1]! <= to) longest = Math.max(longest, times[i]! - times[i - 1]!);
    }
  }
  return longest;
}
