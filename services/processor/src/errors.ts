// Every error code the processor reports: its HTTP error table (README.md documents each code;
// test/errors.test.ts checks that it does) and the base of its errors. The codes every service
// shares (and ServiceError) come from the service kit.
import { HTTP_ERRORS, ServiceError } from '@state-relay/service-kit';

/** Every error code the processor's HTTP API answers with. */
export const ERRORS = {
  ...HTTP_ERRORS,
  not_found: { status: 404, meaning: 'no entity with this key in the tasks this instance owns' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

/**
 * Codes of errors that never reach a client: a task's failure, a topic layout refused at start,
 * an INSTANCE_ID another live process uses.
 */
export const INTERNAL_CODES = {
  TASK_FAILED: 'TASK_FAILED',
  CHANGELOG_NOT_CO_PARTITIONED: 'CHANGELOG_NOT_CO_PARTITIONED',
  TOPICS_NOT_AS_REQUIRED: 'TOPICS_NOT_AS_REQUIRED',
  INSTANCE_ID_IN_USE: 'INSTANCE_ID_IN_USE',
} as const;

/** Base of the processor's errors (tasks/errors.ts's TaskFailure among them). */
export class ProcessorError<C extends string = ErrorCode> extends ServiceError<C> {
  override readonly name: string = 'ProcessorError';
}

/** The live member of the group that keeps an instance id (see InstanceIdInUseError). */
export interface InstanceIdHolderView {
  memberId: string;
  /** The address the group coordinator sees it connect from; unknown when only the leader's verdict names it. */
  clientHost?: string;
  host: string;
  startedAt: number;
}

/**
 * EXACTLY_ONCE=v2: another live process carries this INSTANCE_ID. Both would take the transactional
 * id `<APP_ID>-instance-<INSTANCE_ID>` and fence each other on every start, forever; so this one
 * does not start (or stops, when the group's leader found the duplicate). Not retriable.
 */
export class InstanceIdInUseError extends ProcessorError<typeof INTERNAL_CODES.INSTANCE_ID_IN_USE> {
  static readonly code = INTERNAL_CODES.INSTANCE_ID_IN_USE;
  override readonly name = 'InstanceIdInUseError';

  constructor(
    readonly instanceId: string,
    readonly holder: InstanceIdHolderView,
    /** The STATE_DIR file the id was read from, when INSTANCE_ID is not set. */
    readonly keptIn?: string,
  ) {
    const where = [
      `member ${holder.memberId}`,
      ...(holder.clientHost ? [`client host ${holder.clientHost}`] : []),
      `host ${holder.host}`,
      `started ${new Date(holder.startedAt).toISOString()}`,
    ].join(', ');
    const source = keptIn ? ` (kept in ${keptIn})` : '';
    super(
      INTERNAL_CODES.INSTANCE_ID_IN_USE,
      `INSTANCE_ID "${instanceId}"${source} is in use by another live process in the group (${where}): ` +
        'two processes with one INSTANCE_ID fence each other on every start, so this one does not run. ' +
        'Give each instance its own INSTANCE_ID; if this STATE_DIR was copied from another instance ' +
        '(a cloned volume), delete STATE_DIR/instance-id so this instance makes its own id.',
    );
  }
}
