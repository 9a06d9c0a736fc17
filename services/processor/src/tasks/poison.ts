import { DEAD_LETTER_CODES } from '@state-relay/contracts';
import { recordRejection } from '@state-relay/kafka-runtime';
import type { TaskFailure } from './errors';
import { failed } from './fold';

/** Input topic -> next offset. */
export type Positions = ReadonlyMap<string, bigint>;

/** Why a failure repeats on the same input, as its dead letter will say. */
export interface PoisonCause {
  code: typeof DEAD_LETTER_CODES.PROCESSING_FAILED | typeof DEAD_LETTER_CODES.RECORD_REJECTED;
  reason: string;
}

/**
 * Why `failure` would repeat on the same input (a poison record), or undefined for a failure
 * that may pass by itself (broker down, timeout, fencing, a coordinator move, a store error):
 * only a fold that threw on something other than the store, and a record the broker refused
 * for what it is (by Kafka error code: MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, ...).
 */
export function poisonCause(failure: TaskFailure): PoisonCause | undefined {
  if (failure.kind === 'fold') {
    return {
      code: DEAD_LETTER_CODES.PROCESSING_FAILED,
      reason: failed('processing the record', failure.cause ?? failure),
    };
  }
  if (failure.kind !== 'commit') return undefined;
  const type = recordRejection(failure.cause);
  if (!type) return undefined;
  return { code: DEAD_LETTER_CODES.RECORD_REJECTED, reason: `the broker refused what the record produced (${type})` };
}

/**
 * Counts a task's poison-suspect failures at the same restart position with no commit in
 * between. After `maxAttempts` of them the task isolates: from that position it folds and
 * commits one record per transaction, up to the furthest position the failed attempts had
 * folded to, so the record whose transaction fails the same way is found and dead-lettered;
 * then (or once past that position) it is back to normal. Transient failures are not counted.
 */
export class PoisonWatch {
  private startedAt = '';
  private failedAt: string | undefined;
  private attempts = 0;
  private readonly reached = new Map<string, bigint>();
  private until: Map<string, bigint> | undefined;

  constructor(readonly maxAttempts: number) {}

  get isolating(): boolean {
    return this.until !== undefined;
  }

  /** A new incarnation starts at `positions`: whether it must isolate. */
  started(positions: Positions): boolean {
    this.startedAt = keyOf(positions);
    if (this.until && reachedAll(positions, this.until)) this.reset();
    return this.isolating;
  }

  /**
   * A failure of this incarnation; `folded` = how far it had folded (past the failing record).
   * Returns true when this failure makes the next incarnation isolate.
   */
  failed(suspect: boolean, folded: Positions): boolean {
    if (!suspect || this.until) return false;
    if (this.failedAt !== this.startedAt) {
      this.failedAt = this.startedAt;
      this.attempts = 0;
      this.reached.clear();
    }
    this.attempts++;
    for (const [topic, next] of folded) if (next > (this.reached.get(topic) ?? -1n)) this.reached.set(topic, next);
    if (this.attempts < this.maxAttempts) return false;
    this.until = new Map(this.reached);
    return true;
  }

  /** A transaction committed; the task's positions are now `positions`. Returns whether it still isolates. */
  committed(positions: Positions): boolean {
    if (!this.until || reachedAll(positions, this.until)) this.reset();
    return this.isolating;
  }

  /** The isolated record went to the dead-letter topic: back to normal. */
  isolated(): void {
    this.reset();
  }

  private reset(): void {
    this.until = undefined;
    this.failedAt = undefined;
    this.attempts = 0;
    this.reached.clear();
  }
}

function keyOf(positions: Positions): string {
  return [...positions]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([topic, next]) => `${topic}@${next}`)
    .join(',');
}

function reachedAll(positions: Positions, until: Positions): boolean {
  for (const [topic, next] of until) if ((positions.get(topic) ?? 0n) < next) return false;
  return true;
}
