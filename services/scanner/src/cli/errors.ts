// The CLI's errors. They extend the rules package's CodedError, not ScannerError: the scanner's
// errors module loads the service kit (fastify, kafkajs, pino), over a second of start-up per call.
import { CodedError, type FieldIssue } from '@state-relay/rules';

export const CLI_CODES = {
  /** Bad flags or arguments: exit 2. */
  USAGE_INVALID: 'USAGE_INVALID',
  /** No answer from the scanner (refused, reset, timed out): the request may or may not have arrived. */
  UNREACHABLE: 'unreachable',
  /** An answer that is not the API's JSON. */
  BAD_RESPONSE: 'bad_response',
} as const;

/** Bad flags or arguments (exit 2); the message says which and why. Never contains the token. */
export class UsageError extends CodedError<typeof CLI_CODES.USAGE_INVALID> {
  override readonly name = 'UsageError';
  constructor(message: string) {
    super(CLI_CODES.USAGE_INVALID, message);
  }
}

/**
 * The API answered with an error body (`code` and `message` are the API's own lower_snake ones),
 * or could not be reached (`unreachable`, the one retriable case) or answered other than JSON.
 */
export class ApiError extends CodedError<string> {
  override readonly name = 'ApiError';
  declare readonly issues: FieldIssue[];
  /** Issues the API counted but did not list (it lists at most 20). */
  issuesOmitted = 0;
  constructor(
    readonly status: number | null,
    code: string,
    message: string,
    issues: FieldIssue[] = [],
  ) {
    super(code, message, { issues, retriable: code === CLI_CODES.UNREACHABLE });
  }
}
