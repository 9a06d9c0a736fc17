import { CodedError, type FieldIssue } from '@state-relay/rules';

export const ScheduleErrorCode = {
  INVALID: 'SCHEDULE_INVALID',
  BAD_ARGUMENT: 'SCHEDULE_BAD_ARGUMENT',
} as const;
export type ScheduleErrorCode = (typeof ScheduleErrorCode)[keyof typeof ScheduleErrorCode];

/**
 * One problem with a schedule spec: the services' one issue type (`path` is a JSON pointer into
 * the spec: "/cron", "/timeZone").
 */
export type ScheduleIssue = FieldIssue;

/** Base of every error this package throws. */
export abstract class ScheduleError extends CodedError<ScheduleErrorCode> {
  /** Schedules are pure functions of their input: the same input fails the same way, so retrying never helps. */
  override readonly retriable = false as const;
}

/** A spec that is not a valid schedule; `issues` names every offending field, the message lists them. */
export class ScheduleValidationError extends ScheduleError {
  static readonly code = ScheduleErrorCode.INVALID;
  override readonly name = 'ScheduleValidationError';
  declare readonly issues: ScheduleIssue[];

  constructor(issues: ScheduleIssue[]) {
    super(ScheduleErrorCode.INVALID, issues.map((i) => `${i.path || '/'}: ${i.message}`).join('; '), { issues });
  }
}

/** A caller's mistake, not the user's: a missing anchor, a time that is not a finite epoch-ms number. */
export class ScheduleArgumentError extends ScheduleError {
  static readonly code = ScheduleErrorCode.BAD_ARGUMENT;
  override readonly name = 'ScheduleArgumentError';

  constructor(message: string) {
    super(ScheduleErrorCode.BAD_ARGUMENT, message);
  }
}
