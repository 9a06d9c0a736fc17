import { isStaleMemberError } from '@state-relay/kafka-runtime';
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
 * time. Outcomes: committed → every part resolves; the member is stale → every part rejects
 * (`commit`), the producer is kept; the producer fenced within TRANSACTION_TIMEOUT_MS → another
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

  private async transact(pending: Pending[]): Promise<void> {
    const { groupId, topics, deadlineMs, metrics, logger } = this.options;
    let producer: Producer;
    try {
      if (this.fenced) throw new TaskFailure('fenced', 'the instance producer was fenced by another process');
      producer = await this.currentProducer();
    } catch (err) {
      for (const p of pending) p.reject(err);
      return;
    }
    const membership = this.source?.membership();
    const began = Date.now();
    try {
      const committed = await commitUnits(
        producer,
        pending.map((p) => p.part),
        { groupId, topics, ...(deadlineMs !== undefined && { deadlineMs }), ...(membership && { membership }) },
      );
      metrics.instanceTransactions.inc({ outcome: 'committed' });
      pending.forEach((p, i) => p.resolve(committed[i]!));
    } catch (err) {
      const failure = err instanceof TaskFailure ? err : new TaskFailure('commit', 'instance transaction failed', err);
      if (failure.kind === 'fenced' && Date.now() - began >= this.options.transactionTimeoutMs) {
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
        metrics.instanceTransactions.inc({ outcome: 'stale-member' });
        logger.warn(
          { err: failure.cause ?? failure, membership },
          'the group moved on: the transaction was aborted, its tasks recover after the rejoin',
        );
      } else {
        metrics.instanceTransactions.inc({ outcome: 'failed' });
        logger.warn(
          { err: failure.cause ?? failure },
          'instance transaction failed; its producer is replaced (InitProducerId aborts it)',
        );
        this.replaceProducer(producer);
      }
      for (const p of pending) p.reject(failure);
    }
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
