import { isStaleMemberError, recordRejection } from '@state-relay/kafka-runtime';
import type { Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { ProcessorMetrics } from '../metrics';
import { TaskFailure } from './errors';
import {
  commitUnits,
  type CommitPart,
  type CommittedUnit,
  type GroupMembership,
  type TransactionTopics,
} from './transaction';

const sameMember = (a: GroupMembership, b: GroupMembership) =>
  a.memberId === b.memberId && a.generationId === b.generationId;

/** How a task hands its unit to the instance's transaction (exactly-once v2); see Task.commitDue. */
export interface CommitPort {
  /** One part of the cycle being assembled, or, outside a cycle, a transaction of its own. */
  commit(part: CommitPart): Promise<CommittedUnit>;
  /** A task's unit is due (interval elapsed) or `full` (commit at once): a cycle should run. */
  wake(full: boolean): void;
}

/** What the committer asks of the tasks: the RUNNING ones of the current assignment. */
export interface CommitSource {
  /** Starts the commit of each task whose open unit holds something (Task.commitDue). */
  commitDue(): void;
  /** The member the instance's offsets are committed for; undefined before the first join. */
  membership(): GroupMembership | undefined;
}

export interface InstanceCommitterOptions {
  /** A producer with the instance's transactional id, InitProducerId answered (fencing). */
  createProducer: () => Promise<Producer>;
  groupId: string;
  topics: TransactionTopics;
  intervalMs: number;
  /** TRANSACTION_TIMEOUT_MS: a transaction open this long was aborted by the broker, not taken over. */
  transactionTimeoutMs: number;
  logger: Logger;
  metrics: ProcessorMetrics;
  /** Another process took the instance's transactional id: this one must stop. */
  onFenced: (err: unknown) => void;
  deadlineMs?: number;
}

interface Pending {
  part: CommitPart;
  resolve: (committed: CommittedUnit) => void;
  reject: (err: unknown) => void;
}

/**
 * Exactly-once v2: one transactional producer for the instance and one transaction per commit
 * interval carrying every RUNNING task's unit (changelog, results, dead letters, both inputs'
 * offsets), its offsets fenced by the group generation. A cycle starts when the interval since the
 * last one has passed and a task has something, or at once when a task's unit is full; one runs at a
 * time. Every part goes out under a membership its task incarnation holds the task in, or not at
 * all (`migrated`). Outcomes: committed → every part resolves; the member is stale → every part
 * rejects (`commit`), the producer is kept; a record refused → each part again alone; the producer fenced within TRANSACTION_TIMEOUT_MS → another
 * process has the instance's id: every part rejects (`fenced`) and the instance stops; fenced later
 * (the broker aborted it for its age) or anything else → every part rejects and the producer is
 * replaced (InitProducerId again aborts a transaction whose outcome is unknown).
 */
export class InstanceCommitter implements CommitPort {
  private producer?: Promise<Producer>;
  private source?: CommitSource;
  private assembling?: Pending[];
  private inFlight?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private lastCycleAt = 0;
  private wanted = false;
  private full = false;
  private fenced = false;
  private stopped = false;
  /** Transactions that are not a cycle (isolation, a graceful flush) wait their turn here. */
  private turn: Promise<void> = Promise.resolve();

  constructor(private readonly options: InstanceCommitterOptions) {}

  /** Fences the instance's earlier producers (InitProducerId); resolves once this one may commit. */
  async start(source: CommitSource): Promise<void> {
    this.source = source;
    await this.currentProducer();
  }

  /** Resolves once the producer is fenced and ready: a task restores only after an unknown outcome is resolved. */
  async ready(): Promise<void> {
    if (this.fenced) throw new TaskFailure('fenced', 'the instance producer was fenced by another process');
    await this.currentProducer();
  }

  wake(full: boolean): void {
    this.wanted = true;
    this.full ||= full;
    this.schedule();
  }

  commit(part: CommitPart): Promise<CommittedUnit> {
    return new Promise<CommittedUnit>((resolve, reject) => {
      const pending = { part, resolve, reject };
      if (this.assembling) this.assembling.push(pending);
      else void this.exclusive(() => this.transact([pending]));
    });
  }

  /** Waits for the cycle in flight (graceful stop); the tasks then flush what they hold. */
  async idle(): Promise<void> {
    await this.inFlight;
    await this.turn;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.idle().catch(() => undefined);
    const producer = await this.producer?.catch(() => undefined);
    await producer?.disconnect().catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped || this.inFlight || !this.wanted) return;
    const due = this.lastCycleAt + this.options.intervalMs;
    const now = Date.now();
    if (this.full || now >= due) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.inFlight = this.exclusive(() => this.cycle()).finally(() => {
        this.inFlight = undefined;
        this.schedule();
      });
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.schedule();
    }, due - now);
    this.timer.unref?.();
  }

  /** One transaction at a time on the instance producer, cycles and the others alike. */
  private exclusive(run: () => Promise<void>): Promise<void> {
    const next = this.turn.then(run, run);
    this.turn = next.catch(() => undefined);
    return next;
  }

  private async cycle(): Promise<void> {
    this.wanted = false;
    this.full = false;
    this.lastCycleAt = Date.now();
    const pending: Pending[] = [];
    this.assembling = pending;
    try {
      this.source?.commitDue(); // each due task calls commit() synchronously, into `pending`
    } finally {
      this.assembling = undefined;
    }
    if (pending.length > 0) await this.transact(pending);
  }

  /**
   * One transaction for `pending`. Each part goes out only under a membership its incarnation
   * holds the task in (see PartOwner), read when the transaction starts and again right before
   * its offsets are sent; a part that is no longer held is rejected (`migrated`), never sent. A
   * transaction the broker refused for a record it carries (too large, invalid) is retried part
   * by part, so that only the task whose records were refused counts it (PoisonWatch).
   */
  private async transact(pending: Pending[], splitOnRefusal = true): Promise<void> {
    const { groupId, topics, deadlineMs, metrics, logger } = this.options;
    let producer: Producer;
    try {
      if (this.fenced) throw new TaskFailure('fenced', 'the instance producer was fenced by another process');
      producer = await this.currentProducer();
    } catch (err) {
      for (const p of pending) p.reject(err);
      return;
    }
    // Synchronous from here to commitUnits' first await: the membership and the parts agree.
    let membership = this.source?.membership();
    const sentUnder = membership;
    const admitted = membership ? this.admit(pending, membership) : this.rejectAll(pending);
    if (admitted.length === 0) return;
    const fence = (): GroupMembership => {
      const now = this.source?.membership();
      if (now && membership && sameMember(now, membership)) return membership;
      // A rebalance landed while the records went out: every part must still be held under it.
      const lost = admitted.filter((p) => !now || !this.holds(p.part, now));
      if (lost.length > 0 || !now) {
        throw new TaskFailure(
          'migrated',
          `tasks ${lost.map((p) => p.part.task).join(', ')}: no longer held by this incarnation under the group's new generation; the transaction is aborted`,
        );
      }
      return (membership = now);
    };
    const began = Date.now();
    try {
      const committed = await commitUnits(
        producer,
        admitted.map((p) => p.part),
        { groupId, topics, membership: fence, ...(deadlineMs !== undefined && { deadlineMs }) },
      );
      metrics.instanceTransactions.inc({ outcome: 'committed' });
      admitted.forEach((p, i) => p.resolve(committed[i]!));
    } catch (err) {
      const failure = err instanceof TaskFailure ? err : new TaskFailure('commit', 'instance transaction failed', err);
      if (failure.kind === 'migrated') {
        // Aborted before its offsets went out: the producer is fine.
        failure.refusedUnder = sentUnder;
        metrics.instanceTransactions.inc({ outcome: 'stale-member' });
        logger.warn({ err: failure, membership }, 'a task moved while its transaction was sent; aborted');
      } else if (failure.kind === 'fenced' && Date.now() - began >= this.options.transactionTimeoutMs) {
        // Open past its timeout (a freeze, a stall): the broker aborted it and bumped the epoch.
        metrics.instanceTransactions.inc({ outcome: 'expired' });
        logger.warn(
          { err: failure.cause ?? failure },
          'the instance transaction outlived TRANSACTION_TIMEOUT_MS and was aborted; its producer is replaced',
        );
        this.replaceProducer(producer);
      } else if (failure.kind === 'fenced') {
        metrics.instanceTransactions.inc({ outcome: 'fenced' });
        this.fenced = true;
        logger.error(
          { err: failure.cause ?? failure },
          'the instance producer was fenced: another process took its transactional id',
        );
        this.options.onFenced(failure);
      } else if (isStaleMemberError(failure)) {
        failure.refusedUnder = sentUnder;
        metrics.instanceTransactions.inc({ outcome: 'stale-member' });
        logger.warn(
          { err: failure.cause ?? failure, membership },
          'the group moved on: the transaction was aborted, its tasks recover after the rejoin',
        );
      } else if (splitOnRefusal && admitted.length > 1 && recordRejection(failure)) {
        metrics.instanceTransactions.inc({ outcome: 'refused' });
        logger.warn(
          { err: failure.cause ?? failure, tasks: admitted.map((p) => p.part.task) },
          'the broker refused a record of the instance transaction; each task commits alone to find whose',
        );
        this.replaceProducer(producer);
        for (const p of admitted) await this.transact([p], false);
        return;
      } else {
        metrics.instanceTransactions.inc({ outcome: 'failed' });
        logger.warn(
          { err: failure.cause ?? failure },
          'instance transaction failed; its producer is replaced (InitProducerId aborts it)',
        );
        this.replaceProducer(producer);
      }
      for (const p of admitted) p.reject(failure);
    }
  }

  /** The parts whose incarnation holds their task under `membership`; the others are rejected. */
  private admit(pending: Pending[], membership: GroupMembership): Pending[] {
    const admitted: Pending[] = [];
    for (const p of pending) {
      if (this.holds(p.part, membership)) {
        admitted.push(p);
        continue;
      }
      this.options.metrics.commitPartsRejected.inc();
      this.options.logger.warn(
        { task: p.part.task, builtUnder: p.part.owner?.builtUnder, membership },
        'a commit part outlived the task incarnation that built it; dropped, never sent',
      );
      p.reject(
        new TaskFailure(
          'migrated',
          `task ${p.part.task}: the incarnation that built this part no longer holds the task; it was not sent`,
        ),
      );
    }
    return admitted;
  }

  /** Exactly-once v2 never commits offsets without the generation fence (no membership: before the first join). */
  private rejectAll(pending: Pending[]): Pending[] {
    this.options.metrics.commitPartsRejected.inc(pending.length);
    const failure = new TaskFailure(
      'migrated',
      'no group membership to fence the offsets with (exactly-once v2 never commits without one); not sent',
    );
    for (const p of pending) p.reject(failure);
    return [];
  }

  private holds(part: CommitPart, membership: GroupMembership): boolean {
    const owner = part.owner;
    if (!owner?.builtUnder || !owner.holds()) return false;
    // Same member, not a later generation than now: the incarnation's continuity covers the rest.
    return (
      owner.builtUnder.memberId === membership.memberId && owner.builtUnder.generationId <= membership.generationId
    );
  }

  private currentProducer(): Promise<Producer> {
    this.producer ??= this.options.createProducer();
    const producer = this.producer;
    producer.catch(() => {
      if (this.producer === producer) this.producer = undefined; // the next call tries again
    });
    return producer;
  }

  private replaceProducer(old: Producer): void {
    void old.disconnect().catch(() => undefined);
    this.producer = undefined;
    void this.currentProducer().catch((err: unknown) =>
      this.options.logger.warn({ err }, 'initialising the instance producer failed; the next commit tries again'),
    );
  }
}
