import type { EntityDomain } from '@state-relay/domain';
import { DEAD_LETTER_HEADERS, type StoredEntity } from '@state-relay/contracts';
import { withDeadline } from '@state-relay/kafka-runtime';
import type { TaskStore } from '@state-relay/store';
import type { Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { AggregateInput } from '../aggregate';
import type { CommitReport, InputBatch, TaskContext } from '../extension';
import type { ProcessorMetrics } from '../metrics';
import { asTaskFailure, TaskFailure, type TaskFailureKind } from './errors';
import { DEAD_LETTER_MAX_BYTES, DEFAULT_ENTITY_MAX_BYTES } from '../kafka/limits';
import { foldInput, foldRecord, type FoldContext, type FoldInput } from './fold';
import { commandCapOf, type CommandCap } from './command-share';
import { commitAlone } from './isolation';
import { PoisonWatch, poisonCause, type PoisonCause } from './poison';
import type { CommitPort } from './instance-commit';
import type { CommitLatencyWindow } from '../status/commit-latency-window';
import { commitUnit, type GroupMembership, type PartOwner } from './transaction';
import { currentEntity, UnitOfWork } from './unit-of-work';

export interface TaskTopics {
  events: string;
  commands: string;
  results: string;
  deadLetter: string;
  changelog: string;
}

/**
 * CREATED: assigned, partitions paused. RESTORING: fencing, restoring, seeking (paused).
 * RUNNING: folding and committing. FAILED: uncommitted work dropped, paused, waiting for the
 * lifecycle to re-enter RESTORING. CLOSED: released for good.
 */
export type TaskState = 'CREATED' | 'RESTORING' | 'RUNNING' | 'FAILED' | 'CLOSED';
export const TASK_STATES: readonly TaskState[] = ['CREATED', 'RESTORING', 'RUNNING', 'FAILED', 'CLOSED'];

const NEXT: Record<TaskState, readonly TaskState[]> = {
  CREATED: ['RESTORING', 'CLOSED'],
  RESTORING: ['RUNNING', 'FAILED', 'CLOSED'],
  RUNNING: ['FAILED', 'CLOSED'],
  FAILED: ['RESTORING', 'CLOSED'],
  CLOSED: [],
};

export interface TaskDeps {
  domain: EntityDomain;
  topics: TaskTopics;
  groupId: string;
  logger: Logger;
  metrics: ProcessorMetrics;
  commitIntervalMs: number;
  commitMaxRecords: number;
  maxUncommittedRecords: number;
  /** Back-pressure: stop and restart fetching this task's partitions. */
  pause: (task: number) => void;
  resume: (task: number) => void;
  /**
   * The command share: stop and restart fetching this task's commands partition only. Kept apart
   * from pause/resume so that neither undoes the other (see TaskLifecycle).
   */
  pauseCommands: (task: number) => void;
  resumeCommands: (task: number) => void;
  /** COMMAND_SHARE (default 1: no cap): see commandCapOf. */
  commandShare?: number;
  /** FOLD_SLICE_MS (default 4): fold time after which a slice yields to the event loop. */
  foldSliceMs?: number;
  /** The fold-time clock in ms (default performance.now); tests inject one. */
  clock?: () => number;
  /** A commit (or a fold) failed: the lifecycle decides what happens next. */
  onFailure: (task: Task, failure: TaskFailure) => void;
  onCommit?: (report: CommitReport) => void;
  now?: () => number;
  /** ENTITY_MAX_BYTES (default: what the changelog the processor creates takes). */
  entityMaxBytes?: number;
  /** POISON_MAX_ATTEMPTS (default 3). */
  poisonMaxAttempts?: number;
  /**
   * Exactly-once v2: the instance's transaction takes this task's units (InstanceCommitter); the
   * task has no producer of its own. Absent: v1, one transaction per task on its own producer.
   */
  commits?: CommitPort;
  /** The status page's recent window of event commit latencies (GET /status). */
  commitLatency?: Pick<CommitLatencyWindow, 'record'>;
  /** Exactly-once v2: the member of the current assignment (a part records it; see PartOwner). */
  membership?: () => GroupMembership | undefined;
  /** Exactly-once v2: this incarnation of the task still holds it (RUNNING, in the current assignment). */
  holds?: (task: Task, incarnation: number) => boolean;
}

/** Records folded between two yields to the event loop (a fetched batch can hold thousands). */
const FOLD_SLICE = 500;
/** A slice also ends after this much fold time (FOLD_SLICE_MS): 500 cold commands took 47-68 ms. */
const DEFAULT_FOLD_SLICE_MS = 4;
/** Records folded between two looks at the clock (performance.now costs ~50 ns; a record 5-60 µs). */
const CLOCK_EVERY = 32;

/** How long close() waits for a transaction in flight before it lets go of the producer. */
const CLOSE_WAIT_MS = 15_000;

/**
 * One task: partition p of both inputs, its SQLite store and its transactional producer.
 * Records are folded into the open unit of work as they are fetched (never waiting for a
 * transaction); one transaction per commit interval (or sooner, once the unit is big)
 * commits the unit while the next one accumulates. Reads see open unit → committing unit →
 * SQLite. SQLite gets a unit only after its transaction committed.
 */
export class Task implements TaskContext {
  private current: TaskState = 'CREATED';
  /** Bumped on every entry into RESTORING: work started for an older incarnation is void. */
  incarnation = 0;
  /** Failures since the last successful commit (the lifecycle's back-off). */
  failures = 0;
  store?: TaskStore;
  private producer?: Producer;
  private open = new UnitOfWork();
  private units = 0;
  private committing?: UnitOfWork;
  private inFlight?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private lastCommitAt = 0;
  private readonly position = new Map<string, bigint>();
  /** Every input's next offset as of the last committed unit: what the next unit's changelog records carry. */
  private committedInputs = new Map<string, bigint>();
  /** See resumable. */
  private resumeFrom?: Map<string, bigint>;
  private backPressure = false;
  private readonly fold: FoldContext;
  private readonly poison: PoisonWatch;
  /** Isolating a poison record (see PoisonWatch): each record folded and committed alone. */
  private isolating = false;
  /** Both inputs' batches take turns while isolating, so that each transaction holds one record. */
  private isolationTurn: Promise<void> = Promise.resolve();
  private readonly commandCap?: CommandCap;
  private readonly foldSliceMs: number;
  private readonly clock: () => number;
  /** An event batch of this task is being folded: a command batch's next slice waits for it. */
  private eventsFolding?: Promise<void>;
  /** The unit whose commands reached the cap: the commands partition stays paused until it commits. */
  private commandsHeldBy?: UnitOfWork;

  constructor(
    readonly id: number,
    private readonly deps: TaskDeps,
  ) {
    this.fold = {
      domain: deps.domain,
      commandsTopic: deps.topics.commands,
      current: (key) => currentEntity(key, this.open, this.committing, (k) => this.readStore(k)),
      now: deps.now ?? Date.now,
      entityMaxBytes: deps.entityMaxBytes ?? DEFAULT_ENTITY_MAX_BYTES,
      deadLetterMaxBytes: DEAD_LETTER_MAX_BYTES,
    };
    this.poison = new PoisonWatch(deps.poisonMaxAttempts ?? 3);
    this.commandCap = commandCapOf(deps.commandShare ?? 1, deps.commitMaxRecords, deps.commitIntervalMs);
    this.foldSliceMs = deps.foldSliceMs ?? DEFAULT_FOLD_SLICE_MS;
    this.clock = deps.clock ?? (() => performance.now());
  }

  get state(): TaskState {
    return this.current;
  }

  /** Moves to `to` if the lifecycle allows it from the current state; throws otherwise (a bug). */
  transition(to: TaskState): void {
    const from = this.current;
    if (!NEXT[from].includes(to)) throw new Error(`task ${this.id}: no transition ${from} -> ${to}`);
    this.current = to;
    const { metrics, logger } = this.deps;
    metrics.taskStates.dec({ state: from });
    if (to !== 'CLOSED') metrics.taskStates.inc({ state: to });
    metrics.taskTransitions.inc({ to });
    logger.debug({ task: this.id, from, to, incarnation: this.incarnation }, 'task state');
  }

  /** RESTORING: takes the fenced producer of this incarnation. */
  attachProducer(producer: Producer): void {
    this.producer = producer;
  }

  /** RESTORING → RUNNING: the store is restored, `positions` are the committed offsets read after fencing. */
  start(positions: Map<string, bigint>): void {
    if ((!this.producer && !this.deps.commits) || !this.store) {
      throw new Error(`task ${this.id}: start without producer or store`);
    }
    this.position.clear();
    for (const [topic, offset] of positions) this.position.set(topic, offset);
    this.committedInputs = new Map(positions);
    this.resumeFrom = undefined;
    this.open = new UnitOfWork();
    this.units++; // the dropped unit's number is never reused
    this.committing = undefined;
    this.backPressure = false;
    this.commandsHeldBy = undefined; // entering resumes both partitions
    this.isolating = this.poison.started(this.position);
    this.transition('RUNNING');
    if (this.isolating) {
      this.deps.logger.warn(
        { task: this.id, positions: Object.fromEntries([...this.position].map(([t, o]) => [t, String(o)])) },
        'the same failure repeated at this position: isolating the record that causes it (one record per transaction)',
      );
    }
  }

  /** Where each input continues: the next offset to fetch (after what the open unit holds). */
  positions(): Map<string, bigint> {
    return new Map(this.position);
  }

  /** The number of the open unit: what is folded now is committed by the CommitReport with this `unit`. */
  get openUnit(): number {
    return this.units;
  }

  /** Paused by back-pressure (see mustWait) until the commit in flight lands. */
  get throttled(): boolean {
    return this.backPressure;
  }

  /** The commands partition is paused by the command share (see holdCommands) until its unit commits. */
  get commandsHeld(): boolean {
    return this.commandsHeldBy !== undefined;
  }

  /** Input records folded but not yet committed (open and committing units). */
  get uncommitted(): number {
    return this.open.records + (this.committing?.records ?? 0);
  }

  /**
   * Folds a fetched batch into the open unit, a slice at a time (FOLD_SLICE records or
   * FOLD_SLICE_MS of fold time), yielding to the event loop between slices so that commits and
   * timers of every task run during a long batch. Records before the task's position (a
   * re-delivery after a rejoin) are skipped. The input offsets move with the records: a commit
   * that lands between two slices carries the offset after the last record it holds.
   * Events first: a command batch's slices wait while an event batch of the task is folded, and
   * the commands of one unit stay within the command share (see holdCommands).
   * Resolves to the offset the consumer may resolve: the batch's lastOffset when it was taken
   * whole, the last command folded when the share stopped it (the rest is fetched again once
   * the partition resumes), or undefined when the task took nothing (not RUNNING, a new
   * incarnation, the fold failed, or the share was spent): the consumer must not advance.
   */
  async foldBatch(batch: InputBatch): Promise<string | undefined> {
    if (this.current !== 'RUNNING') return undefined;
    const incarnation = this.incarnation;
    const next = BigInt(batch.lastOffset) + 1n;
    if (next <= (this.position.get(batch.topic) ?? 0n)) return batch.lastOffset;
    if (this.isolating) return this.foldIsolated(batch, incarnation);
    return this.foldFrom(batch, 0, incarnation);
  }

  private async foldFrom(batch: InputBatch, start: number, incarnation: number): Promise<string | undefined> {
    if (batch.topic === this.deps.topics.commands) return this.foldCommands(batch, start, incarnation);
    let done = () => undefined as void;
    const folding = new Promise<void>((resolve) => (done = resolve));
    this.eventsFolding = folding;
    try {
      for (let i = start; i < batch.messages.length;) {
        if (i > start) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (!this.live(incarnation)) return undefined;
        }
        i = this.readingSlice(() => this.foldSlice(batch, i, false));
        if (i < 0) return undefined;
      }
    } finally {
      if (this.eventsFolding === folding) this.eventsFolding = undefined;
      done();
    }
    return this.batchTaken(batch);
  }

  /** foldFrom for the commands topic: after the task's events, within the command share. */
  private async foldCommands(batch: InputBatch, start: number, incarnation: number): Promise<string | undefined> {
    const from = this.position.get(batch.topic) ?? 0n;
    for (let i = start; i < batch.messages.length;) {
      let yielded = i > start;
      if (yielded) await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.eventsFolding) {
        await this.eventsFolding; // the same fetch round: bounded by that batch
        yielded = true;
      }
      if (yielded && !this.live(incarnation)) return undefined;
      // Held: a unit reached the share and has not committed (a commit that started since moved it out of `open`).
      if (this.commandsHeldBy || this.commandsFull()) return this.holdCommands(batch, from);
      i = this.readingSlice(() => this.foldSlice(batch, i, true));
      if (i < 0) return undefined;
    }
    const taken = this.batchTaken(batch);
    if (this.commandsFull()) this.holdCommands(batch, from);
    return taken;
  }

  private live(incarnation: number): boolean {
    return this.current === 'RUNNING' && this.incarnation === incarnation;
  }

  /** The whole batch is folded: the position moves past its trailing markers too. */
  private batchTaken(batch: InputBatch): string {
    this.advance(batch.topic, BigInt(batch.lastOffset) + 1n);
    this.schedule();
    this.checkBackPressure();
    return batch.lastOffset;
  }

  private checkBackPressure(): void {
    if (!this.backPressure && this.mustWait()) {
      this.backPressure = true;
      this.deps.metrics.backPressurePauses.inc();
      this.deps.pause(this.id);
    }
  }

  /** The open unit's commands reached the share (records or fold time). */
  private commandsFull(): boolean {
    const cap = this.commandCap;
    return cap !== undefined && (this.open.commands >= cap.records || this.open.commandMs >= cap.ms);
  }

  /**
   * The open unit's commands reached the share: the commands partition pauses until that unit
   * has committed, which is asked for now (schedule: a held unit is full), so commands go on in
   * back-to-back units with whatever capacity events leave. Resolves how far `batch` was taken:
   * the offset before the task's position, or undefined when none of it was (`from`: the
   * position before it).
   */
  private holdCommands(batch: InputBatch, from: bigint): string | undefined {
    if (!this.commandsHeldBy) {
      this.commandsHeldBy = this.open;
      this.deps.metrics.commandSharePauses.inc();
      this.deps.pauseCommands(this.id);
    }
    this.schedule();
    this.checkBackPressure();
    const reached = this.position.get(batch.topic) ?? 0n;
    return reached > from ? String(reached - 1n) : undefined;
  }

  /**
   * Folds records of `batch` from index `start` into the open unit until FOLD_SLICE records,
   * FOLD_SLICE_MS of fold time or (commands) the command share; returns the index reached, or
   * -1 when the fold failed (the task failed).
   */
  private foldSlice(batch: InputBatch, start: number, commands: boolean): number {
    const from = this.position.get(batch.topic) ?? 0n;
    const unit = this.open;
    const cap = commands ? this.commandCap : undefined;
    let end = Math.min(start + FOLD_SLICE, batch.messages.length);
    if (cap) end = Math.min(end, start + Math.max(0, cap.records - unit.commands));
    let stamps = unit.timestamps.get(batch.topic);
    if (!stamps) unit.timestamps.set(batch.topic, (stamps = []));
    const startedAt = this.clock();
    const budgetMs = cap ? Math.min(this.foldSliceMs, cap.ms - unit.commandMs) : this.foldSliceMs;
    let folded = 0;
    let last: bigint | undefined;
    let offset = 0n;
    let i = start;
    try {
      for (; i < end; i++) {
        if (i > start && (i - start) % CLOCK_EVERY === 0 && this.clock() - startedAt >= budgetMs) break;
        const message = batch.messages[i]!;
        offset = BigInt(message.offset);
        if (offset < from) continue;
        foldRecord(unit, { topic: batch.topic, partition: batch.partition, message }, this.fold);
        stamps.push(Number(message.timestamp));
        folded++;
        last = offset;
      }
    } catch (err) {
      // Not bad input (that is a dead letter): the store failed, or a bug threw mid-unit.
      const reached = new Map(this.position).set(batch.topic, offset + 1n);
      this.failWith(asTaskFailure(err, 'fold', `task ${this.id}: folding a batch failed`), reached);
      return -1;
    }
    unit.records += folded;
    if (commands) {
      unit.commands += folded;
      unit.commandMs += this.clock() - startedAt;
    }
    if (last !== undefined) this.advance(batch.topic, last + 1n);
    this.schedule(); // a commit due now takes this slice; the next one goes into a new unit
    return i;
  }

  private advance(topic: string, next: bigint): void {
    if (next <= (this.position.get(topic) ?? 0n)) return;
    this.position.set(topic, next);
    this.open.offsets.set(topic, next);
  }

  /** See TaskContext.foldInputs: an extension's inputs, into the open unit (nothing unless RUNNING). */
  foldInputs(inputs: Iterable<[string, AggregateInput]>): number {
    if (this.current !== 'RUNNING' || this.isolating) return 0;
    let changed = 0;
    for (const [key, input] of inputs) {
      const outcome = foldInput(this.open, key, input, this.fold);
      if (outcome.refused)
        this.deps.logger.warn({ task: this.id, reason: outcome.refused.reason }, 'generated input refused');
      else if (outcome.changed) changed++;
    }
    if (changed > 0) this.schedule();
    return changed;
  }

  /** The committed state of one entity (SQLite; never an uncommitted unit). */
  read(key: string): StoredEntity | undefined {
    try {
      return this.store?.get(key);
    } catch {
      return undefined; // a closed or failing store: the task is recovering
    }
  }

  /** See TaskContext.entitiesAfter: committed entities in key order. */
  entitiesAfter(afterKey: string | null, limit: number): Array<[string, StoredEntity]> {
    return this.store?.keysAfter(afterKey, limit) ?? [];
  }

  /** RUNNING → FAILED: drops every uncommitted unit and the producer; `store` failures also drop the store. */
  fail(kind: TaskFailureKind, clean = false): void {
    // Exactly-once v2: a transaction whose offsets the group refused left nothing of this task
    // in Kafka or SQLite; it may go on from its last commit (see resumable) without a restore.
    this.resumeFrom = clean && this.deps.commits && kind !== 'store' ? new Map(this.committedInputs) : undefined;
    this.transition('FAILED');
    this.failures++;
    this.clearTimer();
    this.open = new UnitOfWork();
    this.units++; // the dropped unit's number is never reused
    this.committing = undefined;
    this.backPressure = false;
    this.commandsHeldBy = undefined; // the lifecycle pauses both partitions; entering resumes both
    const producer = this.producer;
    this.producer = undefined;
    void producer?.disconnect().catch(() => undefined);
    if (kind === 'store') this.closeStore();
  }

  /**
   * FAILED by a transaction that left nothing behind (its offsets refused: the group moved on):
   * while the same member keeps the task in the next generation, it can go on from its last
   * commit, with its store as it is, instead of fencing and restoring again.
   */
  get resumable(): boolean {
    return this.resumeFrom !== undefined;
  }

  /** Where a resumable task goes on: the input positions of its last commit. */
  resumePositions(): Map<string, bigint> | undefined {
    return this.resumeFrom && new Map(this.resumeFrom);
  }

  /** Resolves once the commit in flight (if any) has settled, either way; it has its own deadline (COMMIT_DEADLINE_MS). */
  async settled(): Promise<void> {
    await this.inFlight?.catch(() => undefined);
  }

  /** Waits for the transaction in flight, then commits what the open unit holds (graceful stop). */
  async flush(): Promise<void> {
    await this.inFlight;
    if (this.current === 'RUNNING' && !this.open.isEmpty) {
      this.clearTimer();
      this.inFlight = this.runCommit();
      await this.inFlight;
    }
  }

  /** → CLOSED: waits (bounded) for a transaction in flight, then releases the producer and the store. */
  async close(): Promise<void> {
    if (this.current === 'CLOSED') return;
    this.transition('CLOSED');
    this.clearTimer();
    if (this.inFlight) await withDeadline(this.inFlight, CLOSE_WAIT_MS, { fallback: undefined });
    this.open = new UnitOfWork();
    this.units++; // the dropped unit's number is never reused
    this.committing = undefined;
    await this.producer
      ?.disconnect()
      .catch((err: unknown) => this.deps.logger.warn({ err, task: this.id }, 'producer disconnect failed'));
    this.producer = undefined;
    this.closeStore();
  }

  refreshStoreMetrics(): void {
    if (this.current !== 'RUNNING' || !this.store) return;
    try {
      this.deps.metrics.storeEntities.set({ task: String(this.id) }, this.store.count());
      this.deps.metrics.storeBytes.set({ task: String(this.id) }, this.store.sizeBytes());
    } catch {
      // the store is failing: the next commit reports it
    }
  }

  private closeStore(): void {
    const store = this.store;
    this.store = undefined;
    try {
      store?.close();
    } catch (err) {
      this.deps.logger.warn({ err, task: this.id }, 'closing the task store failed');
    }
    this.deps.metrics.storeEntities.remove({ task: String(this.id) });
    this.deps.metrics.storeBytes.remove({ task: String(this.id) });
  }

  /**
   * Back-pressure: stop fetching for this task while its uncommitted records reach the bound,
   * or while a full unit waits for the commit in flight (a backlog: folding more would only
   * starve that commit of the event loop and make the next transactions small).
   */
  private mustWait(): boolean {
    if (this.uncommitted >= this.deps.maxUncommittedRecords) return true;
    return this.inFlight !== undefined && this.open.records >= this.deps.commitMaxRecords;
  }

  /**
   * Exactly-once v2: the instance's commit cycle asks (synchronously, see InstanceCommitter): the
   * open unit goes into the cycle's transaction unless a commit of this task is still in flight.
   */
  commitDue(): void {
    if (this.current !== 'RUNNING' || this.isolating || this.inFlight || this.open.isEmpty) return;
    this.clearTimer();
    this.inFlight = this.runCommit();
  }

  /** Starts a commit when one is due (interval elapsed, or the unit is big) and none is in flight. */
  private schedule(): void {
    if (this.current !== 'RUNNING' || this.isolating || this.inFlight || this.open.isEmpty) return;
    // Full: COMMIT_MAX_RECORDS, or the commands holding their partition paused (see holdCommands).
    const full = this.open.records >= this.deps.commitMaxRecords || this.commandsHeldBy === this.open;
    if (this.deps.commits) return this.deps.commits.wake(full);
    const now = Date.now();
    const due = this.lastCommitAt + this.deps.commitIntervalMs;
    if (now >= due || full) {
      this.clearTimer();
      this.inFlight = this.runCommit();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.schedule();
    }, due - now);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async runCommit(): Promise<void> {
    const unit = this.open;
    const incarnation = this.incarnation;
    this.committing = unit;
    this.open = new UnitOfWork();
    this.lastCommitAt = Date.now();
    try {
      await this.commit(unit);
      if (this.incarnation === incarnation) this.poison.committed(this.position);
    } catch (err) {
      if (this.incarnation === incarnation && this.current === 'RUNNING') {
        this.failWith(asTaskFailure(err, 'commit', `task ${this.id}: commit failed`), this.position);
      }
    } finally {
      if (this.committing === unit) this.committing = undefined;
      this.inFlight = undefined;
      this.schedule(); // a full unit commits right away, and the task fetches again meanwhile
      if (this.commandsHeldBy === unit && this.current === 'RUNNING') {
        this.commandsHeldBy = undefined; // the unit holding the share committed (or failed: then not RUNNING)
        this.deps.resumeCommands(this.id);
      }
      if (this.backPressure && this.current === 'RUNNING' && !this.mustWait()) {
        this.backPressure = false;
        this.deps.resume(this.id);
      }
    }
  }

  /** One transaction for `unit`, then SQLite; throws a TaskFailure. */
  private async commit(unit: UnitOfWork): Promise<void> {
    const unitNumber = this.units++;
    const store = this.store!;
    const now = this.deps.now ?? Date.now;
    const startedAt = now();
    const incarnation = this.incarnation;
    // All inputs, not only those this unit moved: compaction may leave only this unit's records.
    const inputs = new Map([...this.committedInputs, ...unit.offsets]);
    // v2 commits every input's offset each time: a pending transaction of the task is then always
    // visible to a new owner's require_stable read, whatever the unit moved.
    const { changes, checkpoint } = this.deps.commits
      ? await this.deps.commits.commit({ task: this.id, unit, inputs, offsets: inputs, owner: this.owner(incarnation) })
      : await commitUnit(this.producer!, unit, {
          task: this.id,
          groupId: this.deps.groupId,
          topics: this.deps.topics,
          inputs,
        });
    if (this.incarnation === incarnation) this.committedInputs = inputs;
    const committedAt = now();
    // Committed in Kafka: now SQLite. A crash right here is repaired by restore, which
    // replays the changelog from the previous checkpoint.
    if (changes.length > 0) {
      try {
        store.commit(changes, checkpoint ?? store.checkpoint() ?? '0', committedAt, inputs);
      } catch (err) {
        throw new TaskFailure('store', `task ${this.id}: SQLite failed after the Kafka commit`, err);
      }
    }
    this.failures = 0;
    this.report(unit, unitNumber, startedAt, committedAt, changes.length);
  }

  /** Who a part of `incarnation` belongs to: the instance committer sends it only while this holds. */
  private owner(incarnation: number): PartOwner {
    const { membership, holds } = this.deps;
    return {
      builtUnder: membership?.(),
      holds: () => (holds ? holds(this, incarnation) : this.incarnation === incarnation && this.current === 'RUNNING'),
    };
  }

  /** Every failure of a RUNNING task goes through here: the poison watch counts it, the lifecycle acts on it. */
  private failWith(failure: TaskFailure, folded: ReadonlyMap<string, bigint>): void {
    if (this.poison.failed(poisonCause(failure) !== undefined, folded)) {
      this.deps.metrics.poisonIsolations.inc();
      this.deps.logger.warn(
        { task: this.id, attempts: this.poison.maxAttempts, err: failure.cause ?? failure },
        'the same failure repeated on the same input: the task isolates the record on its next start',
      );
    }
    this.deps.onFailure(this, failure);
  }

  /**
   * A fold slice's reads inside one SQLite read transaction (TaskStore.reading: one WAL snapshot,
   * ended when the slice returns, before the next yield). Failing to begin or end it fails the
   * task as a store failure, as a failing read does.
   */
  private readingSlice(slice: () => number): number {
    const store = this.store;
    if (!store) return slice();
    try {
      return store.reading(slice);
    } catch (err) {
      if (this.current === 'RUNNING') {
        this.failWith(new TaskFailure('store', `task ${this.id}: a read transaction failed`, err), this.position);
      }
      return -1;
    }
  }

  /** The store's row; a failing store fails the task as a store failure (never a poison record). */
  private readStore(key: string): StoredEntity | undefined {
    try {
      return this.store!.get(key);
    } catch (err) {
      throw new TaskFailure('store', `task ${this.id}: reading the store failed`, err);
    }
  }

  /**
   * Isolation: folds and commits each record of the batch alone. A record whose fold throws, or
   * whose transaction fails the way that repeats, goes to the dead-letter topic in a transaction
   * that also commits the offset past it; then the rest of the batch is folded normally.
   */
  private async foldIsolated(batch: InputBatch, incarnation: number): Promise<string | undefined> {
    const previous = this.isolationTurn;
    let release = () => undefined as void;
    this.isolationTurn = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      for (let i = 0; i < batch.messages.length; i++) {
        if (!this.live(incarnation)) return undefined;
        if (!this.isolating) return await this.foldFrom(batch, i, incarnation);
        const message = batch.messages[i]!;
        if (BigInt(message.offset) < (this.position.get(batch.topic) ?? 0n)) continue;
        const alone = this.isolate({ topic: batch.topic, partition: batch.partition, message }, incarnation);
        this.inFlight = alone.then(() => undefined);
        const ok = await alone.finally(() => (this.inFlight = undefined));
        if (!ok) return undefined;
      }
      const next = BigInt(batch.lastOffset) + 1n;
      if (next > (this.position.get(batch.topic) ?? 0n)) this.position.set(batch.topic, next);
      return batch.lastOffset;
    } finally {
      release();
      this.schedule();
    }
  }

  /** See commitAlone; resolves false when the task failed (not RUNNING any more). */
  private async isolate(record: FoldInput, incarnation: number): Promise<boolean> {
    let cause: PoisonCause | undefined;
    try {
      cause = await commitAlone(record, { fold: this.fold, commit: (unit) => this.commit(unit) });
    } catch (err) {
      const failure = asTaskFailure(err, 'commit', `task ${this.id}: an isolated record failed`);
      if (this.incarnation === incarnation && this.current === 'RUNNING') this.failWith(failure, this.position);
      return false;
    }
    if (this.incarnation !== incarnation || this.current !== 'RUNNING') return false; // closed meanwhile
    if (cause) {
      this.deps.metrics.poisonRecords.inc();
      this.deps.logger.warn(
        { task: this.id, topic: record.topic, offset: record.message.offset, ...cause },
        'poison record isolated and sent to the dead-letter topic; back to normal processing',
      );
      this.poison.isolated();
    }
    this.position.set(record.topic, BigInt(record.message.offset) + 1n);
    this.isolating = this.poison.committed(this.position);
    return true;
  }

  private report(unit: UnitOfWork, unitNumber: number, startedAt: number, committedAt: number, changes: number): void {
    const { metrics, onCommit } = this.deps;
    const task = String(this.id);
    for (const dead of unit.deadLetters)
      metrics.deadLetters.inc({ code: String(dead.headers?.[DEAD_LETTER_HEADERS.code]) });
    metrics.transactions.inc({ task });
    metrics.commitSeconds.observe((committedAt - startedAt) / 1000);
    for (const [outcome, n] of Object.entries(unit.eventOutcomes)) if (n > 0) metrics.events.inc({ outcome }, n);
    for (const [outcome, n] of unit.commandOutcomes) metrics.commands.inc({ outcome }, n);
    for (const stamps of unit.timestamps.values()) {
      const latencies = stamps.map((t) => Math.max(0, committedAt - t));
      for (const ms of latencies) metrics.commitLatencySeconds.observe(ms / 1000);
      this.deps.commitLatency?.record(committedAt, latencies);
    }
    onCommit?.({
      task: this.id,
      unit: unitNumber,
      startedAt,
      committedAt,
      inputs: unit.timestamps,
      changes,
      results: unit.results.length,
      deadLetters: unit.deadLetters.length,
    });
  }
}
