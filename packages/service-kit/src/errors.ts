// The kit's errors: the base of every error a service answers over HTTP (`code` picks the status
// from the service's error table), and a bad configuration (the process exits 2).
import { CodedError, type FieldIssue } from '@state-relay/rules';

/** One offending field: a JSON pointer prefixed with the request part, e.g. /body/options/rate. */
export type { FieldIssue };

/** One row of a service's error table: the HTTP status and the one-line meaning its README shows. */
export interface ErrorMeaning {
  status: number;
  meaning: string;
}
export type ErrorTable = Readonly<Record<string, ErrorMeaning>>;

/** The codes every service's HTTP edge can answer with; a service adds its own to them. */
export const HTTP_ERRORS = {
  invalid_request: { status: 400, meaning: 'the body, query or path does not match the schema' },
  invalid_json: { status: 400, meaning: 'the body is not valid JSON' },
  unauthorized: { status: 401, meaning: 'missing or wrong bearer token' },
  route_not_found: { status: 404, meaning: 'no such route' },
  body_too_large: { status: 413, meaning: 'the body is larger than the service accepts' },
  unsupported_media_type: { status: 415, meaning: 'the body is not application/json' },
  malformed_request: { status: 400, meaning: 'not a well-formed HTTP/1.1 request; the connection is closed' },
  request_timeout: {
    status: 408,
    meaning: 'the headers or the whole request did not arrive in time; the connection is closed',
  },
  headers_too_large: { status: 431, meaning: 'the request line and headers are larger than the service accepts' },
  internal_error: { status: 500, meaning: 'anything else; the body never says more' },
} as const satisfies ErrorTable;

export type HttpErrorCode = keyof typeof HTTP_ERRORS;

export const CONFIG_INVALID = 'CONFIG_INVALID' as const;

/** Base of the kit's errors and of every error a service answers over HTTP (`code` picks the status). */
export class ServiceError<C extends string = string> extends CodedError<C> {
  override readonly name: string = 'ServiceError';
}

/** Every bad environment variable at once, each message naming its variable (never quoting a secret). */
export class ConfigError extends ServiceError<typeof CONFIG_INVALID> {
  static readonly code = CONFIG_INVALID;
  override readonly name = 'ConfigError';

  constructor(readonly problems: string[]) {
    super(CONFIG_INVALID, `invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

const MAX_LISTED = 10;

/** The issues as one message: the first ten, then how many more. */
export function describeIssues(issues: readonly FieldIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED).map((i) => `${i.path}: ${i.message}`);
  const more = issues.length > MAX_LISTED ? `; and ${issues.length - MAX_LISTED} more` : '';
  return `${listed.join('; ')}${more}`;
}

/** Whether a failure is worth retrying: from the error's own flag (kafkajs sets `retriable`), never its text. */
export function isRetriable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { retriable?: unknown }).retriable === true;
}
