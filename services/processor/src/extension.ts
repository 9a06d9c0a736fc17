import type { StoredEntity } from '@state-relay/contracts';
import type { KafkaMessage } from 'kafkajs';
import type { AggregateInput } from './aggregate';

/**
 * Code an embedder runs inside the processor's loop, as a Kafka Streams punctuator or commit
 * listener would (ProcessorDeps.extension). The service itself sets none. Both calls run on the
 * processing path: what they take, every task waits for.
 */
export interface ProcessingExtension {
  /**
   * Awaited inside the fetch loop after a fetched batch of `task` was folded into its open unit
   * of work (a stream-time punctuator's place): kafkajs fetches again only when it returns. A
   * throw is the consumer's failure (kafkajs crashes it; the processor replaces it).
   */
  afterBatch?(task: TaskContext, batch: InputBatch): void | Promise<void>;
  /** Every committed transaction of every task, after its unit was flushed to SQLite. */
  onCommit?(report: CommitReport): void;
}

/** What an extension may do with a RUNNING task, from inside the loop. */
export interface TaskContext {
  /** The task (partition) number. */
  readonly id: number;
  /** The open unit of work: what is folded now is committed by the CommitReport with this `unit`. */
  readonly openUnit: number;
  /** Committed entities after `afterKey` (null: from the first) in key order, at most `limit` (SQLite only). */
  entitiesAfter(afterKey: string | null, limit: number): Array<[string, StoredEntity]>;
  /**
   * Folds inputs made inside the processor into the open unit through the same aggregate path
   * as consumed records; the task's next transaction commits them (changes only: a command's
   * verdict is not sent to the results topic). Returns how many changed an entity.
   */
  foldInputs(inputs: Iterable<[string, AggregateInput]>): number;
}

/** A fetched batch of one input partition: what a task folds and what afterBatch is shown. */
export interface InputBatch {
  topic: string;
  partition: number;
  messages: KafkaMessage[];
  /** Offset of the last record of the batch (markers included), as kafkajs reports it. */
  lastOffset: string;
}

/** What one committed transaction carried (for metrics and an extension's onCommit). */
export interface CommitReport {
  task: number;
  /** The unit's number within the task (see Task.openUnit): what an observer matches folds to. */
  unit: number;
  startedAt: number;
  committedAt: number;
  /** Input topic -> timestamps of the records the transaction committed. */
  inputs: Map<string, number[]>;
  changes: number;
  results: number;
  deadLetters: number;
}
