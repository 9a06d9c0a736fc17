// Every error code the scanner reports, in one map: the HTTP status and the one-line meaning.
// README.md documents each code; test/errors.test.ts checks that it does.

export const ERRORS = {
  invalid_request: { status: 400, meaning: 'the body, query or path does not match the schema or the rule language' },
  invalid_json: { status: 400, meaning: 'the body is not valid JSON' },
  unauthorized: { status: 401, meaning: 'missing or wrong bearer token' },
  scan_not_found: { status: 404, meaning: 'no scan with this id' },
  schedule_not_found: { status: 404, meaning: 'no schedule with this id' },
  route_not_found: { status: 404, meaning: 'no such route' },
  scan_finished: { status: 409, meaning: 'the scan already finished (completed, cancelled or failed)' },
  body_too_large: { status: 413, meaning: 'the body is larger than MAX_BODY_BYTES' },
  unsupported_media_type: { status: 415, meaning: 'the body is not application/json' },
  replica_behind: { status: 500, meaning: 'a scan failed: the replica did not reach the changelog end in time' },
  command_send_failed: { status: 500, meaning: 'a scan failed: its commands could not be sent to the commands topic' },
  internal_error: { status: 500, meaning: 'anything else; the body never says more' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

/** One offending field: a JSON pointer prefixed with the request part, e.g. /body/condition/all/1/op. */
export interface FieldIssue {
  path: string;
  message: string;
}

/** Base of the scanner's errors; `code` decides the HTTP status and `retriable` whether to try again. */
export class ScannerError extends Error {
  override readonly name: string = 'ScannerError';
  readonly code: ErrorCode;
  readonly retriable: boolean;
  override readonly cause: unknown;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; retriable?: boolean } = {}) {
    super(message);
    this.code = code;
    this.cause = options.cause;
    this.retriable = options.retriable ?? false;
  }

  get statusCode(): number {
    return ERRORS[this.code].status;
  }
}

/** A scan request that fails validation; `issues` names every offending field. */
export class InvalidRequestError extends ScannerError {
  override readonly name = 'InvalidRequestError';
  constructor(readonly issues: FieldIssue[]) {
    super('invalid_request', describeIssues(issues));
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
export class AbortedError extends Error {
  override readonly name = 'AbortedError';
}

const MAX_LISTED = 10;

function describeIssues(issues: FieldIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED).map((i) => `${i.path}: ${i.message}`);
  const more = issues.length > MAX_LISTED ? `; and ${issues.length - MAX_LISTED} more` : '';
  return `${listed.join('; ')}${more}`;
}

/** Whether a failure is worth retrying: from the error's own flag (kafkajs sets `retriable`), never its text. */
export function isRetriable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { retriable?: unknown }).retriable === true;
}
