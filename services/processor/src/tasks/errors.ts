import { INTERNAL_CODES, ProcessorError } from '../errors';

/** Why a task left RUNNING (or could not reach it): decides what recovery does first. */
export const TaskFailureKinds = {
  /** Another producer took the task's transactional id: re-enter only if the group says we own it. */
  fenced: 'fenced',
  /** A transaction failed or its outcome is unknown: re-fence, restore, seek. */
  commit: 'commit',
  /** Folding a record threw something other than a store error (a bug): counted towards isolating it. */
  fold: 'fold',
  /** SQLite failed after a Kafka commit (or while restoring): the store is rebuilt from Kafka. */
  store: 'store',
  /** Fencing, reading the changelog end, restoring or reading offsets failed: retried. */
  restore: 'restore',
  /**
   * Exactly-once v2: the incarnation that built a commit part no longer holds the task (revoked,
   * rejoined, failed) or there is no membership to fence it with: the part was dropped, never sent.
   */
  migrated: 'migrated',
} as const;
export type TaskFailureKind = (typeof TaskFailureKinds)[keyof typeof TaskFailureKinds];

/** Every task failure is retried by the lifecycle (with back-off); none stops the process. */
export class TaskFailure extends ProcessorError<typeof INTERNAL_CODES.TASK_FAILED> {
  override readonly name = 'TaskFailure';
  declare readonly retriable: true;
  /**
   * Exactly-once v2: set when the instance transaction's offsets were refused or never sent (the
   * group moved on, or a task moved while it was sent): the generation it was sent under.
   * Nothing of it can become visible, so a task the member keeps may go on without a restore.
   */
  refusedUnder?: { generationId: number; memberId: string };
  constructor(
    readonly kind: TaskFailureKind,
    message: string,
    cause?: unknown,
  ) {
    super(INTERNAL_CODES.TASK_FAILED, message, { cause, retriable: true });
  }
}

export function asTaskFailure(err: unknown, kind: TaskFailureKind, message: string): TaskFailure {
  return err instanceof TaskFailure ? err : new TaskFailure(kind, message, err);
}
