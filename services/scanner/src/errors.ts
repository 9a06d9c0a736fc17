// Every error code the scanner reports, in one map: the HTTP status and the one-line meaning.
// README.md documents each code; test/errors.test.ts checks that it does. The codes every
// service shares (and the error base class) come from the service kit.
import {
  describeIssues,
  HTTP_ERRORS,
  isRetriable,
  ServiceError,
  type ErrorTable,
  type FieldIssue,
} from '@state-relay/service-kit';

export const ERRORS = {
  ...HTTP_ERRORS,
  invalid_request: { status: 400, meaning: 'the body, query or path does not match the schema or the rule language' },
  scan_not_found: { status: 404, meaning: 'no scan with this id' },
  schedule_not_found: { status: 404, meaning: 'no schedule with this id' },
  scan_finished: { status: 409, meaning: 'the scan already finished (completed, cancelled or failed)' },
  too_many_schedules: { status: 409, meaning: 'there are already MAX_SCHEDULES schedules; delete one first' },
  idempotency_key_conflict: {
    status: 409,
    meaning: 'the Idempotency-Key was used before (within IDEMPOTENCY_KEY_TTL_MS) with a different body',
  },
  too_many_scans: { status: 429, meaning: 'there are already MAX_ACTIVE_SCANS pending or running scans' },
  body_too_large: { status: 413, meaning: 'the body is larger than MAX_BODY_BYTES' },
  replica_behind: { status: 500, meaning: 'a scan failed: the replica did not reach the changelog end in time' },
  command_send_failed: { status: 500, meaning: 'a scan failed: its commands could not be sent to the commands topic' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export type { FieldIssue };
export { isRetriable };

/** Codes of errors that never reach a client: the engine's aborts, a command send's timeout. */
export const INTERNAL_CODES = {
  ABORTED: 'ABORTED',
  COMMAND_SEND_TIMEOUT: 'COMMAND_SEND_TIMEOUT',
} as const;

/**
 * Base of the scanner's errors; `code` decides the HTTP status (a code outside ERRORS answers
 * 500) and `retriable` whether to try again.
 */
export class ScannerError<C extends string = ErrorCode> extends ServiceError<C> {
  override readonly name: string = 'ScannerError';

  get statusCode(): number {
    return (ERRORS as ErrorTable)[this.code]?.status ?? 500;
  }
}

/** A scan request that fails validation; `issues` names every offending field. */
export class InvalidRequestError extends ScannerError {
  override readonly name = 'InvalidRequestError';
  override readonly issues: FieldIssue[];
  constructor(issues: FieldIssue[]) {
    super('invalid_request', describeIssues(issues), { issues });
    this.issues = issues;
  }
}

export class ScanNotFoundError extends ScannerError {
  override readonly name = 'ScanNotFoundError';
  constructor(id: string) {
    super('scan_not_found', `no scan with id ${JSON.stringify(id.slice(0, 100))}`);
  }
}

export class ScheduleNotFoundError extends ScannerError {
  override readonly name = 'ScheduleNotFoundError';
  constructor(id: string) {
    super('schedule_not_found', `no schedule with id ${JSON.stringify(id.slice(0, 100))}`);
  }
}

export class ScanFinishedError extends ScannerError {
  override readonly name = 'ScanFinishedError';
  constructor(id: string, status: string) {
    super('scan_finished', `scan ${id} is already ${status}`);
  }
}

/** Too many scans pending or running: a client can try again once one has finished. */
export class TooManyScansError extends ScannerError {
  override readonly name = 'TooManyScansError';
  constructor(limit: number) {
    super(
      'too_many_scans',
      `there are already ${limit} pending or running scans, the limit (MAX_ACTIVE_SCANS); ` +
        'try again when one has finished, or cancel one',
      { retriable: true },
    );
  }
}

/** Schedules only go when deleted, so this is a conflict with the current state, not a rate. */
export class TooManySchedulesError extends ScannerError {
  override readonly name = 'TooManySchedulesError';
  constructor(limit: number) {
    super('too_many_schedules', `there are already ${limit} schedules, the limit (MAX_SCHEDULES); delete one first`);
  }
}

/** The replica did not reach the changelog end offsets seen at scan start within the bound. */
export class ReplicaBehindError extends ScannerError {
  override readonly name = 'ReplicaBehindError';
  constructor(waitedMs: number, lag: number) {
    super(
      'replica_behind',
      `the replica did not catch up with the changelog within ${waitedMs} ms (${lag} records behind)`,
      {
        retriable: true,
      },
    );
  }
}

/** Thrown into waits when the engine stops or a scan is cancelled; never reported to a client. */
export class AbortedError extends ScannerError<typeof INTERNAL_CODES.ABORTED> {
  override readonly name = 'AbortedError';
  constructor(message: string) {
    super(INTERNAL_CODES.ABORTED, message);
  }
}
