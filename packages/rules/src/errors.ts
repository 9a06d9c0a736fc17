import type { ValidationIssue } from './types';

export const RuleErrorCode = {
  INVALID: 'RULE_INVALID',
  APPLY_FAILED: 'RULE_APPLY_FAILED',
} as const;
export type RuleErrorCode = (typeof RuleErrorCode)[keyof typeof RuleErrorCode];

/** Base of every error this package throws. */
export abstract class RuleError extends Error {
  abstract readonly code: RuleErrorCode;
  /** Rules are pure functions of their input: the same input fails the same way, so retrying never helps. */
  readonly retriable = false as const;
}

const MAX_LISTED_ISSUES = 20;

/** A condition or action that does not follow the language; `issues` names every offending field. */
export class RuleValidationError extends RuleError {
  static readonly code = RuleErrorCode.INVALID;
  override readonly name = 'RuleValidationError';
  readonly code = RuleErrorCode.INVALID;
  readonly issues: ValidationIssue[];

  constructor(issues: ValidationIssue[]) {
    super(describeIssues(issues));
    this.issues = issues;
  }
}

/** An action that is valid but cannot be applied to this value (e.g. increment of a string). */
export class RuleApplyError extends RuleError {
  static readonly code = RuleErrorCode.APPLY_FAILED;
  override readonly name = 'RuleApplyError';
  readonly code = RuleErrorCode.APPLY_FAILED;
  readonly field: string | undefined;

  constructor(message: string, options: { field?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.field = options.field;
  }
}

function describeIssues(issues: ValidationIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((i) => `${i.path || '/'}: ${i.message}`);
  const more = issues.length > MAX_LISTED_ISSUES ? `; and ${issues.length - MAX_LISTED_ISSUES} more` : '';
  const noun = issues.length === 1 ? 'issue' : 'issues';
  return `invalid rule (${issues.length} ${noun}): ${listed.join('; ')}${more}`;
}
