import { decodeInputPositions, INPUT_POSITIONS_HEADER, type StoredEntity } from '@state-relay/contracts';
import type { MemberTasks, StoreHeld, TaskOwnership } from '@state-relay/kafka-runtime';
import type { StoreChange, TaskStore } from '@state-relay/store';
import type { IHeaders, Producer } from 'kafkajs';
import { asTaskFailure, TaskFailure } from './errors';
import type { CommitSource } from './instance-commit';
import type { RestoreProgress } from '../status/restore-progress';
import { Task, type TaskDeps } from './task';
import type { GroupMembership } from './transaction';

/** A changelog record as restore hands it over. */
export interface ChangelogRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers?: IHeaders;
}

/** What the lifecycle needs from Kafka, SQLite and the consumer: the real ones in kafka-ports.ts, fakes in tests. */
export interface LifecyclePorts {
  /**
   * A producer with the task's transactional id on which InitProducerId has completed (fencing).
   * Exactly-once v2: undefined once the instance producer is ready (the task has none of its own).
   */
  initProducer(task: number): Promise<Producer | undefined>;
  openStore(task: number): TaskStore;
  removeStore(task: number): void;
  /** The tasks with a store file in STATE_DIR (owned, or kept after a revoke or a restart). */
  storesOnDisk?(): number[];
  /** The changelog offset a store file that is not open reflects (-1: none, or unreadable). */
  peekCheckpoint?(task: number): number;
  /**
   * End offset of every changelog partition; for `tasks` (the ones entering) the end once every
   * transaction that had written to their partitions has ended (exactly-once v2, see settledEnds).
   */
  changelogEnds(tasks?: readonly number[]): Promise<Map<number, bigint>>;
  restore(request: {
    from: Map<number, bigint | null>;
    ends: Map<number, bigint>;
    apply: (task: number, records: ChangelogRecord[], next: bigint) => void;
    /** False once the task left the restore (revoked or failed): nothing more is applied for it. */
    wanted: (task: number) => boolean;
    /** The changelog no longer holds offset `at` of the task: the restore goes on from `logStart` after this. */
    onOffsetOutOfRange: (task: number, at: bigint, logStart: bigint) => void;
  }): Promise<{ records: number; failed: Map<number, unknown> }>;
  /** Input topic -> task -> the group's committed offset (earliest when none), of `tasks` (default: all). */
  committedOffsets(tasks?: readonly number[]): Promise<Map<string, Map<number, string>>>;
  ownership(memberId: string, task: number): Promise<TaskOwnership>;
  /** Both input partitions of a task (assignment, restore, back-pressure). */
  pause(task: number): void;
  resume(task: number): void;
  /** One input partition of a task (the command share pauses the commands partition alone). */
  pauseTopic(topic: string, task: number): void;
  resumeTopic(topic: string, task: number): void;
  seek(topic: string, task: number, offset: string): void;
}

/** See LifecycleOptions.resumeWaitMs: longer than a rebalance usually takes to hand out the next generation. */
const RESUME_WAIT_MS = 15_000;

export interface LifecycleOptions {
  ports: LifecyclePorts;
  /** The changelog's delete.retention.ms: an older local copy is rebuilt, never caught up. */
  deleteRetentionMs: number;
  inputTopics: readonly string[];
  task: Omit<TaskDeps, 'pause' | 'resume' | 'pauseCommands' | 'resumeCommands' | 'onFailure' | 'membership' | 'holds'>;
  /** How long a resumable task waits for the next generation's assignment before it enters the long way. */
  resumeWaitMs?: number;
  /** Back-off after the first retry of a failed task: base, doubled per failure, capped. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Each restore's progress, for GET /status. */
  restores?: RestoreProgress;
  /**
   * STATE_CLEANUP_DELAY_MS: how long the store file of a task this instance does not own is kept
   * (a task that comes back restores only what the changelog gained meanwhile); 0 deletes at once.
   */
  stateCleanupDelayMs?: number;
}

/** See LifecycleOptions.stateCleanupDelayMs. */
export const STATE_CLEANUP_DELAY_MS = 600_000;

/**
 * The one place task transitions are decided. For the instance's current assignment:
 *   assigned     → CREATED (partitions paused) → RESTORING
 *   RESTORING    = fence (InitProducerId with the task's id) → read the changelog end →
 *                  restore the store to it → read the committed offsets of both inputs →
 *                  seek both → RUNNING (resume)
 *   any failure  → FAILED (uncommitted units dropped, paused) → RESTORING again, with back-off,
 *                  once the task is known to be ours (this generation's assignment, or the
 *                  coordinator says so: a fenced zombie must not fence the real owner)
 *   revoked      → CLOSED, state file kept for STATE_CLEANUP_DELAY_MS (a task that returns
 *                  restores only the changelog's tail; the leader gives a task back to a member
 *                  with its store), then deleted unless the task came back
 * A batch is only folded by a RUNNING task of the current assignment.
 */
export class TaskLifecycle implements CommitSource {
  private readonly tasks = new Map<number, Task>();
  private readonly closing = new Map<number, Promise<void>>();
  /** Store files of tasks this instance does not own, each deleted when its timer fires. */
  private readonly cleanups = new Map<number, NodeJS.Timeout>();
  /** The checkpoint of each store file not open, read once (see held); forgotten when the task is opened again. */
  private readonly peeked = new Map<number, number>();
  private assigned = new Set<number>();
  private memberId = '';
  private generationId = -1;
  private stopping = false;

  constructor(private readonly options: LifecycleOptions) {}

  /** The tasks of the current assignment. */
  get owned(): number[] {
    return [...this.assigned].sort((a, b) => a - b);
  }

  /** What this member publishes when it joins (see stickyAssignment): the tasks it owns and its stores on disk. */
  held(): MemberTasks {
    const { ports, task: deps } = this.options;
    let onDisk: number[] = [];
    try {
      onDisk = ports.storesOnDisk?.() ?? [];
    } catch (err) {
      deps.logger.warn({ err }, 'listing the task stores on disk failed; joining as if there were none');
    }
    const stores = onDisk.map((id): StoreHeld => {
      const open = this.tasks.get(id)?.store;
      if (open) {
        try {
          const checkpoint = open.checkpoint();
          return [id, checkpoint === null ? -1 : Number(checkpoint)];
        } catch {
          return [id, -1]; // a failing store: the task is recovering
        }
      }
      let offset = this.peeked.get(id);
      if (offset === undefined) this.peeked.set(id, (offset = ports.peekCheckpoint?.(id) ?? -1));
      return [id, offset];
    });
    return { owned: this.owned, stores };
  }

  /** Every assigned task is RUNNING. */
  get allRunning(): boolean {
    return [...this.assigned].every((id) => this.tasks.get(id)?.state === 'RUNNING');
  }

  stateOf(id: number): Task['state'] | undefined {
    return this.tasks.get(id)?.state;
  }

  /** The task that may fold a batch of `partition` now, if any. */
  runningTask(partition: number): Task | undefined {
    const task = this.tasks.get(partition);
    return !this.stopping && task?.state === 'RUNNING' && this.assigned.has(partition) ? task : undefined;
  }

  /**
   * A new generation's assignment (kafkajs GROUP_JOIN, before it fetches for it). Synchronous
   * on purpose: pauses and seeks land before the first fetch of the generation.
   */
  onAssignment(memberId: string, ids: number[], generationId = -1): void {
    if (this.stopping) return;
    // A new member id (evicted, or a replaced consumer) or a skipped generation: another member
    // may have owned and committed our tasks meanwhile, so what they hold in memory may be stale.
    const rejoined =
      (this.memberId !== '' && memberId !== this.memberId) ||
      (this.generationId >= 0 && generationId > this.generationId + 1);
    this.memberId = memberId;
    this.generationId = generationId;
    this.assigned = new Set(ids);
    for (const [id, task] of this.tasks) {
      if (!this.assigned.has(id)) this.release(task, true);
    }
    const entering: Task[] = [];
    const resuming: Task[] = [];
    for (const id of this.owned) {
      const task = this.tasks.get(id) ?? this.create(id);
      try {
        if (rejoined && (task.state === 'RUNNING' || task.state === 'RESTORING')) {
          this.fail(
            task,
            new TaskFailure('fenced', `task ${id}: this instance rejoined the group; another member may have owned it`),
          );
          entering.push(task); // ours in this generation: restored again at once
        } else if (task.state === 'CREATED') {
          entering.push(task);
          this.options.ports.pause(id);
        } else if (task.state === 'RUNNING') {
          // kafkajs starts a new generation at the committed offsets; this task has folded past them.
          for (const [topic, offset] of task.positions()) this.options.ports.seek(topic, id, offset.toString());
          // A replacement consumer knows nothing of the old one's pauses.
          if (task.throttled) this.options.ports.pause(id);
          else if (task.commandsHeld) this.options.ports.pauseTopic(this.options.task.topics.commands, id);
        } else if (task.state === 'FAILED' && task.resumable && !rejoined) {
          resuming.push(task); // kept by the same member: its refused transaction left nothing behind
        } else {
          if (task.state === 'FAILED') entering.push(task); // ours in this generation: no need to ask the coordinator
          this.options.ports.pause(id); // same reason: not RUNNING means paused
        }
        // RESTORING: its own seek, after restore, lands in this generation.
      } catch (err) {
        // This runs in kafkajs's GROUP_JOIN listener, which swallows a throw: the task would
        // never leave CREATED. Failed, it is re-entered by the normal recovery.
        const failure = new TaskFailure('restore', `task ${id}: pausing or seeking it on assignment failed`, err);
        if (task.state === 'CREATED') {
          entering.splice(entering.indexOf(task), 1);
          task.transition('RESTORING'); // CREATED cannot fail directly
        }
        if (task.state !== 'FAILED') this.fail(task, failure);
      }
    }
    this.options.task.metrics.tasksOwned.set(this.assigned.size);
    this.scheduleCleanups();
    if (entering.length > 0) void this.enterGuarded(entering);
    for (const task of resuming) void this.resume(task);
  }

  /** The member of the current assignment (exactly-once v2 commits its offsets for it). */
  membership(): GroupMembership | undefined {
    return this.memberId && this.generationId >= 0
      ? { generationId: this.generationId, memberId: this.memberId }
      : undefined;
  }

  /** The instance's commit cycle (exactly-once v2): every RUNNING task of the assignment hands over its unit. */
  commitDue(): void {
    for (const task of this.tasks.values()) if (this.runningTask(task.id)) task.commitDue();
  }

  /** Reads one entity from whichever owned task holds it (committed state only). */
  read(key: string): { task: number; entity: StoredEntity } | undefined {
    for (const [id, task] of this.tasks) {
      const entity = task.read(key);
      if (entity) return { task: id, entity };
    }
    return undefined;
  }

  forEachTask(fn: (task: Task) => void): void {
    for (const task of this.tasks.values()) fn(task);
  }

  /** Graceful stop, step 1: fold nothing more and commit what every task holds. */
  async drain(): Promise<void> {
    this.stopping = true;
    for (const id of this.tasks.keys()) this.options.ports.pause(id);
    await Promise.all([...this.tasks.values()].map((t) => t.flush().catch(() => undefined)));
  }

  /** Graceful stop, step 2 (after leaving the group): close every task, keeping its state file. */
  async closeAll(): Promise<void> {
    this.stopping = true;
    for (const id of [...this.cleanups.keys()]) this.keep(id); // the next run's first assignment decides
    const tasks = [...this.tasks.values()];
    this.tasks.clear();
    await Promise.all(tasks.map((t) => t.close()));
    await Promise.all(this.closing.values());
  }

  private create(id: number): Task {
    this.keep(id); // back before its kept store was deleted: restore reads only the changelog's tail
    this.peeked.delete(id);
    const commands = this.options.task.topics.commands;
    const task: Task = new Task(id, {
      ...this.options.task,
      pause: (t) => this.options.ports.pause(t),
      // Back-pressure ends: the commands partition stays paused while the command share holds it.
      resume: (t) => {
        if (!this.runningTask(t)) return;
        if (!task.commandsHeld) return this.options.ports.resume(t);
        for (const topic of this.options.inputTopics) {
          if (topic !== commands) this.options.ports.resumeTopic(topic, t);
        }
      },
      pauseCommands: (t) => this.options.ports.pauseTopic(commands, t),
      // The share's unit committed: the commands partition resumes unless back-pressure holds both.
      resumeCommands: (t) => {
        if (this.runningTask(t) && !task.throttled) this.options.ports.resumeTopic(commands, t);
      },
      onFailure: (t, failure) => this.fail(t, failure),
      membership: () => this.membership(),
      // Not runningTask(): a graceful stop's flush still commits for the assignment it holds.
      holds: (t, incarnation) =>
        t.incarnation === incarnation && t.state === 'RUNNING' && this.tasks.get(t.id) === t && this.assigned.has(t.id),
    });
    this.options.task.metrics.taskStates.inc({ state: 'CREATED' });
    this.tasks.set(id, task);
    return task;
  }

  /** Revoked (or stopping): CLOSED; when the task moved away its state file is deleted after STATE_CLEANUP_DELAY_MS. */
  private release(task: Task, revoked: boolean): void {
    if (this.tasks.get(task.id) === task) this.tasks.delete(task.id);
    const previous = this.closing.get(task.id) ?? Promise.resolve();
    const done = previous
      .then(() => task.close())
      .catch((err: unknown) => this.options.task.logger.warn({ err, task: task.id }, 'closing a revoked task failed'))
      .finally(() => {
        if (this.closing.get(task.id) === done) this.closing.delete(task.id);
      });
    this.closing.set(task.id, done);
    this.peeked.delete(task.id); // read again once closed: its last commit moved it
    if (!revoked) return;
    const delayMs = this.options.stateCleanupDelayMs ?? STATE_CLEANUP_DELAY_MS;
    this.options.task.logger.info({ task: task.id, keptForMs: delayMs }, 'task revoked; closed, its state file kept');
    this.scheduleCleanup(task.id, delayMs);
  }

  /** Every store on disk of a task not owned (left by a revoke or an earlier run) gets its cleanup timer. */
  private scheduleCleanups(): void {
    if (!this.options.ports.storesOnDisk) return;
    let stores: number[];
    try {
      stores = this.options.ports.storesOnDisk();
    } catch (err) {
      this.options.task.logger.warn({ err }, 'listing the task stores on disk failed; kept stores are not cleaned up');
      return;
    }
    const delayMs = this.options.stateCleanupDelayMs ?? STATE_CLEANUP_DELAY_MS;
    for (const id of stores) if (!this.tasks.has(id) && !this.cleanups.has(id)) this.scheduleCleanup(id, delayMs);
  }

  private scheduleCleanup(id: number, delayMs: number): void {
    this.keep(id);
    const remove = () => {
      this.cleanups.delete(id);
      if (this.tasks.has(id) || this.stopping) return; // back meanwhile, or the process is stopping
      void (this.closing.get(id) ?? Promise.resolve()).then(() => {
        if (this.tasks.has(id) || this.stopping) return;
        try {
          this.peeked.delete(id);
          this.options.ports.removeStore(id);
          this.options.task.logger.info({ task: id }, 'kept state file of a task owned elsewhere deleted');
        } catch (err) {
          this.options.task.logger.warn({ err, task: id }, 'deleting a kept state file failed');
        }
      });
    };
    if (delayMs <= 0) return remove();
    const timer = setTimeout(remove, delayMs);
    timer.unref();
    this.cleanups.set(id, timer);
  }

  /** The task is ours again (or the process stops): its store file stays. */
  private keep(id: number): void {
    const timer = this.cleanups.get(id);
    if (timer) clearTimeout(timer);
    this.cleanups.delete(id);
  }

  private fail(task: Task, failure: TaskFailure): void {
    if (task.state === 'CLOSED' || task.state === 'FAILED') return;
    const { logger, metrics } = this.options.task;
    logger.warn(
      { err: failure.cause ?? failure, task: task.id, kind: failure.kind, failures: task.failures + 1 },
      `task failed (${failure.kind}); uncommitted work dropped, recovering`,
    );
    metrics.taskFailures.inc({ kind: failure.kind });
    const refused = failure.refusedUnder;
    task.fail(failure.kind, refused !== undefined);
    try {
      this.options.ports.pause(task.id);
    } catch (err) {
      // A FAILED task folds nothing (its batches are dropped unresolved); recovery pauses it again.
      logger.warn({ err, task: task.id }, 'pausing a failed task failed');
    }
    // The assignment of a later generation of the same member has already kept it (it was RUNNING
    // then, so the rejoin rule did not end it): it goes on at once. Otherwise that assignment is
    // on its way (the group moved on), and onAssignment resumes it; the recovery below is the
    // fallback.
    const now = this.membership();
    if (
      task.resumable &&
      refused &&
      now?.memberId === refused.memberId &&
      now.generationId > refused.generationId &&
      this.assigned.has(task.id) &&
      this.tasks.get(task.id) === task
    ) {
      void this.resume(task);
      return;
    }
    this.scheduleRecovery(task);
  }

  /**
   * FAILED → RESTORING → RUNNING without fence, restore or offset read, for a task whose failed
   * transaction left nothing behind (Task.resumable) and which the same member kept: its store
   * and its last commit's input positions are exactly what the group committed for it.
   */
  private async resume(task: Task): Promise<void> {
    const { ports } = this.options;
    const { logger, metrics } = this.options.task;
    const positions = task.resumePositions();
    if (!positions) return;
    task.transition('RESTORING');
    const incarnation = ++task.incarnation;
    const live = () =>
      task.incarnation === incarnation && task.state === 'RESTORING' && this.tasks.get(task.id) === task;
    try {
      ports.pause(task.id);
      await task.settled(); // the refused transaction's own answer (it is over before anything moves)
      if (!live()) return;
      task.start(positions);
      for (const [topic, offset] of positions) ports.seek(topic, task.id, offset.toString());
      ports.resume(task.id);
    } catch (err) {
      if (live() || (task.incarnation === incarnation && task.state === 'RUNNING')) {
        this.fail(task, asTaskFailure(err, 'restore', `task ${task.id}: resuming it failed`));
      }
      return;
    }
    metrics.taskResumes.inc();
    logger.info(
      { task: task.id, positions: Object.fromEntries([...positions].map(([t, o]) => [t, String(o)])) },
      'task resumed from its last commit without a restore (its transaction was refused as the group moved on)',
    );
  }

  /**
   * enter() for each of `tasks` on its own (a listener's or a timer's): one task's slow or
   * failing step — a stable read held by a zombie's open transaction, a changelog end that does
   * not settle, a failed offset read — neither delays nor fails another. A throw fails only the
   * task it left half-way.
   */
  private enterGuarded(tasks: Task[]): Promise<void> {
    return Promise.all(
      tasks.map((task) => {
        const incarnation = task.incarnation + 1; // what enter() makes it, synchronously
        return this.enter(task).catch((err: unknown) => {
          if (task.state === 'RESTORING' && task.incarnation === incarnation && this.tasks.get(task.id) === task) {
            this.fail(task, asTaskFailure(err, 'restore', `task ${task.id}: entering it failed`));
          }
        });
      }),
    ).then(() => undefined);
  }

  /**
   * Re-enters a FAILED task once it is known to be ours. The coordinator is asked (a member
   * it evicted, e.g. a process frozen past its session, gets 'not-owner' and waits for the
   * rejoin kafkajs makes when its heartbeat fails); GROUP_JOIN re-enters it directly.
   */
  private scheduleRecovery(task: Task): void {
    const { retryBaseMs = 250, retryMaxMs = 30_000, resumeWaitMs = RESUME_WAIT_MS } = this.options;
    const n = task.failures;
    const backOff = n <= 1 ? 0 : Math.min(retryMaxMs, retryBaseMs * 2 ** (n - 2)) * (0.8 + Math.random() * 0.4);
    // A resumable task waits for the generation's assignment, which resumes it; failing that, the long way.
    const delay = task.resumable ? Math.max(backOff, resumeWaitMs) : backOff;
    const incarnation = task.incarnation;
    const timer = setTimeout(() => {
      void (async () => {
        if (this.stopping || task.state !== 'FAILED' || task.incarnation !== incarnation) return;
        if (!this.assigned.has(task.id) || this.tasks.get(task.id) !== task) return;
        const ownership = await this.options.ports.ownership(this.memberId, task.id).catch(() => 'unknown' as const);
        if (task.state !== 'FAILED' || task.incarnation !== incarnation) return;
        if (ownership === 'owner') {
          await this.enterGuarded([task]);
        } else {
          this.options.task.logger.info({ task: task.id, ownership }, 'failed task is not ours right now; waiting');
          task.failures++;
          this.scheduleRecovery(task);
        }
      })();
    }, delay);
    timer.unref();
  }

  /**
   * The path of one task to RUNNING. Tasks of an assignment enter side by side, each with its
   * own reads and its own restore, not one restore shared by the tasks that reach it together:
   * sharing would make a task wait for the slowest partition of the batch before it runs, and
   * side by side restores are not slower (`pnpm bench:restore`, 6 partitions: 1,000,000 records
   * in 13.9 s first start to last end, against 16.5 s for one shared restore); a task whose store
   * is up to date opens no restore at all.
   * Synchronous up to the first await: the pause lands before the generation's first fetch.
   */
  private async enter(task: Task): Promise<void> {
    const { ports, deleteRetentionMs } = this.options;
    const { logger, metrics } = this.options.task;
    task.transition('RESTORING');
    const incarnation = ++task.incarnation;
    ports.pause(task.id);
    // Revoked (it leaves `tasks` at once and closes later), failed, or entered again meanwhile.
    const live = () =>
      task.incarnation === incarnation && task.state === 'RESTORING' && this.tasks.get(task.id) === task;
    const failWith = (err: unknown, kind: 'restore' | 'store', what: string) => {
      if (live()) this.fail(task, asTaskFailure(err, kind, `task ${task.id}: ${what}`));
    };

    // 1. Fence: every earlier producer of the task's id is fenced and its transaction completed.
    // First this incarnation's own commit still in flight settles (exactly-once v2: it shares the
    // instance producer, so no fence ends it): committed or not, it is over before anything is read.
    await this.closing.get(task.id);
    await task.settled();
    if (!live()) return;
    try {
      const producer = await ports.initProducer(task.id);
      if (producer) {
        if (live()) task.attachProducer(producer);
        else void producer.disconnect().catch(() => undefined);
      }
    } catch (err) {
      if (live()) this.fail(task, new TaskFailure('restore', `task ${task.id}: initialising its producer failed`, err));
      return;
    }
    if (!live()) return;

    // 2. The changelog end, read only now that no earlier owner can still add to it.
    let ends: Map<number, bigint>;
    try {
      ends = await ports.changelogEnds([task.id]);
    } catch (err) {
      return failWith(err, 'restore', 'reading the changelog end failed');
    }
    if (!live()) return;

    // 3. Restore the store from its checkpoint (or from scratch) to that end.
    const started = Date.now();
    const end = ends.get(task.id) ?? 0n;
    let store: TaskStore;
    let from: bigint | null;
    try {
      if (!task.store) {
        task.store = ports.openStore(task.id);
        if (task.store.rebuiltFrom !== null) {
          logger.warn(
            { task: task.id, from: task.store.rebuiltFrom },
            'task store was written in an older format; its rows were dropped and it is rebuilt from the changelog',
          );
        }
      }
      store = task.store;
      from = this.restoreFrom(task.id, store, end, deleteRetentionMs);
    } catch (err) {
      return failWith(err, 'store', 'opening its store failed');
    }
    const progress = this.options.restores;
    progress?.begin(task.id, from, end);
    let restored: number;
    let failed: Map<number, unknown>;
    metrics.restoringTasks.inc();
    try {
      ({ records: restored, failed } = await ports.restore({
        from: new Map([[task.id, from]]),
        ends,
        // The records' bytes go to SQLite as they are: nothing is decoded or encoded here.
        apply: (id, records, next) => {
          store.commit(
            records.map((r): StoreChange => [r.key!, r.value]),
            next.toString(),
            undefined,
            inputPositionsOf(records),
          );
          metrics.restoredRecords.inc(records.length);
          progress?.applied(id, records.length, next);
        },
        wanted: (id) => id === task.id && live(),
        onOffsetOutOfRange: (id, at, logStart) => this.restartAtLogStart(id, store, at, logStart),
      }));
    } catch (err) {
      progress?.finish(task.id, false);
      return failWith(err, 'store', 'restoring its store failed');
    } finally {
      metrics.restoringTasks.dec();
    }
    progress?.finish(task.id, live() && !failed.has(task.id));
    if (!live()) return;
    try {
      if (failed.has(task.id)) throw failed.get(task.id);
      store.markSynced(Date.now());
    } catch (err) {
      return failWith(err, 'store', 'restoring its store failed');
    }

    // 4. Committed offsets of both inputs, read after fencing: they match the restored changelog.
    let committed: Map<string, Map<number, string>>;
    try {
      committed = await ports.committedOffsets([task.id]);
    } catch (err) {
      return failWith(err, 'restore', 'reading committed offsets failed');
    }
    if (!live()) return;

    // 5. Seek both inputs there (never below what the store reflects) and resume.
    let positions: Map<string, bigint>;
    try {
      positions = this.startPositions(task, committed);
    } catch (err) {
      return failWith(err, 'store', 'reading its input positions failed');
    }
    task.start(positions);
    for (const [topic, offset] of positions) ports.seek(topic, task.id, offset.toString());
    ports.resume(task.id);
    task.refreshStoreMetrics();
    logger.info(
      { tasks: [task.id], records: restored, ms: Date.now() - started },
      restored > 0 ? 'tasks restored from the changelog' : 'tasks ready (stores were up to date)',
    );
  }

  /**
   * Where each input continues: the group's committed offset, or the store's input position when
   * that is higher, since the offset read after the fence may be stale (README.md, 'Input positions
   * come from the changelog too').
   */
  private startPositions(task: Task, committed: Map<string, Map<number, string>>): Map<string, bigint> {
    const { logger, metrics } = this.options.task;
    const restored = task.store!.inputPositions();
    const positions = new Map<string, bigint>();
    for (const topic of this.options.inputTopics) {
      const group = BigInt(committed.get(topic)?.get(task.id) ?? '0');
      const store = restored.get(topic) ?? 0n;
      if (store > group) {
        logger.warn(
          { task: task.id, topic, committed: String(group), restored: String(store) },
          'committed offset is behind what the store reflects (read stale after the fence); continuing from the store',
        );
        metrics.staleOffsets.inc({ topic });
      }
      positions.set(topic, store > group ? store : group);
    }
    return positions;
  }

  /**
   * Where restore starts for a store: its checkpoint, or null (from scratch) when the store
   * cannot be trusted — ahead of the changelog (the topic was recreated), or last in step with
   * it longer ago than delete.retention.ms while records were added since (a tombstone among
   * them may have been compacted away: catching up would bring its key back).
   */
  private restoreFrom(id: number, store: TaskStore, end: bigint, deleteRetentionMs: number): bigint | null {
    const { logger } = this.options.task;
    const now = Date.now();
    const raw = store.checkpoint();
    if (raw === null) {
      store.wipe(now); // a rebuild begins: its start is recorded (see the resume below)
      return null;
    }
    const checkpoint = BigInt(raw);
    if (checkpoint > end) {
      logger.warn(
        { task: id, checkpoint: raw, end: String(end) },
        'store checkpoint is past the changelog end; rebuilding the store',
      );
      store.wipe(now);
      return null;
    }
    const rebuilding = store.rebuildStartedAt();
    if (rebuilding !== null) {
      // An interrupted rebuild: a read from the start that ends within delete.retention.ms of
      // its beginning sees every tombstone, so a young one goes on from its checkpoint.
      const age = now - rebuilding;
      const fields = { task: id, checkpoint: raw, end: String(end), rebuildStartedAgoMs: age, deleteRetentionMs };
      if (age < deleteRetentionMs) {
        logger.info(fields, 'resuming an interrupted rebuild of the store from its checkpoint');
        return checkpoint;
      }
      logger.warn(
        fields,
        'an interrupted rebuild began longer ago than delete.retention.ms; rebuilding from the start',
      );
      store.wipe(now);
      return null;
    }
    // Only the commit marker of the store's own last transaction can follow its checkpoint
    // without a record in between; any other writer adds a record and a marker.
    if (end - checkpoint <= 1n) return checkpoint;
    const synced = store.syncedAt();
    const age = synced === null ? Infinity : Date.now() - synced;
    if (age > deleteRetentionMs) {
      logger.warn(
        {
          task: id,
          checkpoint: raw,
          end: String(end),
          syncedAgoMs: Number.isFinite(age) ? age : null,
          deleteRetentionMs,
        },
        'store last matched the changelog longer ago than delete.retention.ms; rebuilding it so no compacted tombstone is missed',
      );
      store.wipe(now);
      return null;
    }
    return checkpoint;
  }

  /**
   * The changelog's start moved past where the restore of task `id` stood (OFFSET_OUT_OF_RANGE).
   * A store holding rows is wiped: the records removed from the gap may have held tombstones.
   */
  private restartAtLogStart(id: number, store: TaskStore, at: bigint, logStart: bigint): void {
    const fields = { task: id, at: String(at), logStart: String(logStart) };
    if (store.checkpoint() === null) {
      this.options.task.logger.info(fields, 'the changelog starts past offset 0; rebuilding the store from its start');
      return;
    }
    this.options.task.logger.warn(
      fields,
      'the changelog no longer holds the store checkpoint (its start moved past it); wiping the store and rebuilding it from the log start',
    );
    store.wipe(Date.now());
  }
}

/**
 * The input positions of the last record in a restored batch that names them. Units commit in
 * log order, so it names the highest; the store keeps the highest across batches.
 */
function inputPositionsOf(records: ChangelogRecord[]): Map<string, bigint> | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const positions = decodeInputPositions(records[i]!.headers?.[INPUT_POSITIONS_HEADER]);
    if (positions.size > 0) return positions;
  }
  return undefined;
}
