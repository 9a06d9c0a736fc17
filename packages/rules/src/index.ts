// The public surface of @state-relay/rules: the condition/action language.
export type {
  Action,
  ActionOutcome,
  ComparisonOp,
  Condition,
  DomainAction,
  EvalContext,
  FieldIssue,
  FieldPath,
  JsonObject,
  JsonPrimitive,
  JsonValue,
  Operand,
  RelativeTime,
  ValidationIssue,
} from './types';
export {
  CodedError,
  RuleError,
  RuleErrorCode,
  RuleValidationError,
  RuleApplyError,
  type CodedErrorOptions,
} from './errors';
export { RULE_LIMITS } from './limits';
export { validateCondition } from './validate-condition';
export { validateAction } from './validate-action';
export { parseCondition, parseAction } from './parse';
export { DURATION_PATTERN, durationParts, durationProblem, parseDurationMs, type DurationParts } from './duration';
export { isRelativeTime, resolveOperand } from './operand';
export { evaluateCondition } from './evaluate';
export { applyAction } from './actions';
export { compileConditionToSql, type SqlPrefilter } from './sql';
export { ActionSchema, ConditionSchema, FieldPathSchema, JsonValueSchema, RelativeTimeSchema } from './schema';
