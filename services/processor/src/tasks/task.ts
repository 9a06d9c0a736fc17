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

  /** Input records folded but not yet committed (open and committing units). */
  get uncommitted(): number {
    return this.open.records + (this.committing?.records ?? 0);
  }

  /**
   * Folds a fetched batch into the open unit, FOLD_SLICE records at a time, yielding to the
   * event loop between slices so that commits and timers of every task run during a long
   * batch. Records before the task's position (a re-delivery after a rejoin) are skipped. The
   * input offsets move with the records: a commit that lands between two slices carries the
   * offset after the last record it holds. Resolves false when the task cannot take the batch
   * (not RUNNING, a new incarnation, or the fold failed): the caller must not advance the
   * consumer past it.
   */
  async foldBatch(batch: InputBatch): Promise<boolean> {
    if (this.current !== 'RUNNING') return false;
    const incarnation = this.incarnation;
    const next = BigInt(batch.lastOffset) + 1n;
    if (next <= (this.position.get(batch.topic) ?? 0n)) return true;
    if (this.isolating) return this.foldIsolated(batch, incarnation);
    return this.foldFrom(batch, 0, incarnation);
  }

  private async foldFrom(batch: InputBatch, start: number, incarnation: number): Promise<boolean> {
    const next = BigInt(batch.lastOffset) + 1n;
    const { messages } = batch;
    for (let i = start; i < messages.length; i += FOLD_SLICE) {
      if (i > start) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.current !== 'RUNNING' || this.incarnation !== incarnation) return false;
      }
      if (!this.readingSlice(() => this.foldSlice(batch, i, Math.min(i + FOLD_SLICE, messages.length)))) return false;
    }
    this.advance(batch.topic, next); // past the batch's trailing markers too
    this.schedule();
    if (!this.backPressure && this.mustWait()) {
      this.backPressure = true;
      this.deps.metrics.backPressurePauses.inc();
      this.deps.pause(this.id);
    }
    return true;
  }

  private foldSlice(batch: InputBatch, start: number, end: number): boolean {
    const from = this.position.get(batch.topic) ?? 0n;
    const unit = this.open;
    let stamps = unit.timestamps.get(batch.topic);
    if (!stamps) unit.timestamps.set(batch.topic, (stamps = []));
    let folded = 0;
    let last: bigint | undefined;
    let offset = 0n;
    try {
      for (let i = start; i < end; i++) {
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
      return false;
    }
    unit.records += folded;
    if (last !== undefined) this.advance(batch.topic, last + 1n);
    this.schedule(); // a commit due now takes this slice; the next one goes into a new unit
    return true;
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
    if (this.deps.commits) return this.deps.commits.wake(this.open.records >= this.deps.commitMaxRecords);
    const now = Date.now();
    const due = this.lastCommitAt + this.deps.commitIntervalMs;
    if (now >= due || this.open.records >= this.deps.commitMaxRecords) {
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
  private readingSlice(slice: () => boolean): boolean {
    const store = this.store;
    if (!store) return slice();
    try {
      return store.reading(slice);
    } catch (err) {
      if (this.current === 'RUNNING') {
        this.failWith(new TaskFailure('store', `task ${this.id}: a read transaction failed`, err), this.position);
      }
      return false;
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
  private async foldIsolated(batch: InputBatch, incarnation: number): Promise<boolean> {
    const previous = this.isolationTurn;
    let release = () => undefined as void;
    this.isolationTurn = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      for (let i = 0; i < batch.messages.length; i++) {
        if (this.current !== 'RUNNING' || this.incarnation !== incarnation) return false;
        if (!this.isolating) return await this.foldFrom(batch, i, incarnation);
        const message = batch.messages[i]!;
        if (BigInt(message.offset) < (this.position.get(batch.topic) ?? 0n)) continue;
        const alone = this.isolate({ topic: batch.topic, partition: batch.partition, message }, incarnation);
        this.inFlight = alone.then(() => undefined);
        const ok = await alone.finally(() => (this.inFlight = undefined));
        if (!ok) return false;
      }
      const next = BigInt(batch.lastOffset) + 1n;
      if (next > (this.position.get(batch.topic) ?? 0n)) this.position.set(batch.topic, next);
      return true;
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
