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

/** Codes of errors that never reach a client: a task's failure, a topic layout refused at start. */
export const INTERNAL_CODES = {
  TASK_FAILED: 'TASK_FAILED',
  CHANGELOG_NOT_CO_PARTITIONED: 'CHANGELOG_NOT_CO_PARTITIONED',
  TOPICS_NOT_AS_REQUIRED: 'TOPICS_NOT_AS_REQUIRED',
} as const;

/** Base of the processor's errors (tasks/errors.ts's TaskFailure among them). */
export class ProcessorError<C extends string = ErrorCode> extends ServiceError<C> {
  override readonly name: string = 'ProcessorError';
}
