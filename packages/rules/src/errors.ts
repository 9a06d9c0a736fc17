import type { FieldIssue, ValidationIssue } from './types';

export interface CodedErrorOptions {
  cause?: unknown;
  /** Whether trying again can help; false unless said. */
  retriable?: boolean;
  /** Set on validation errors: every offending field. */
  issues?: readonly FieldIssue[];
}

/**
 * The shape of every error state-relay throws; each package extends it once, as its base. `code`
 * is UPPER_SNAKE, except the services' HTTP codes, documented lower_snake (they are sent in bodies).
 * Here, at the bottom of the package graph, so every package can reach it.
 */
export class CodedError<C extends string = string> extends Error {
  readonly code: C;
  readonly retriable: boolean;
  // Own enumerable fields, so logs show them (Error's own `cause` is not enumerable).
  override readonly cause: unknown;
  declare readonly issues?: readonly FieldIssue[];

  constructor(code: C, message: string, options: CodedErrorOptions = {}) {
    super(message);
    this.code = code;
    this.retriable = options.retriable ?? false;
    this.cause = options.cause;
    if (options.issues !== undefined) (this as { issues?: readonly FieldIssue[] }).issues = options.issues;
  }
}

export const RuleErrorCode = {
  INVALID: 'RULE_INVALID',
  APPLY_FAILED: 'RULE_APPLY_FAILED',
} as const;
export type RuleErrorCode = (typeof RuleErrorCode)[keyof typeof RuleErrorCode];

/** Base of every error this package throws. */
export abstract class RuleError extends CodedError<RuleErrorCode> {
  /** Rules are pure functions of their input: the same input fails the same way, so retrying never helps. */
  override readonly retriable = false as const;
}

const MAX_LISTED_ISSUES = 20;

/** A condition or action that does not follow the language; `issues` names every offending field. */
export class RuleValidationError extends RuleError {
  static readonly code = RuleErrorCode.INVALID;
  override readonly name = 'RuleValidationError';
  declare readonly issues: ValidationIssue[];

  constructor(issues: ValidationIssue[]) {
    super(RuleErrorCode.INVALID, describeIssues(issues), { issues });
  }
}

/** An action that is valid but cannot be applied to this value (e.g. increment of a string). */
export class RuleApplyError extends RuleError {
  static readonly code = RuleErrorCode.APPLY_FAILED;
  override readonly name = 'RuleApplyError';
  readonly field: string | undefined;

  constructor(message: string, options: { field?: string; cause?: unknown } = {}) {
    super(RuleErrorCode.APPLY_FAILED, message, { cause: options.cause });
    this.field = options.field;
  }
}

function describeIssues(issues: ValidationIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((i) => `${i.path || '/'}: ${i.message}`);
  const more = issues.length > MAX_LISTED_ISSUES ? `; and ${issues.length - MAX_LISTED_ISSUES} more` : '';
  const noun = issues.length === 1 ? 'issue' : 'issues';
  return `invalid rule (${issues.length} ${noun}): ${listed.join('; ')}${more}`;
}
