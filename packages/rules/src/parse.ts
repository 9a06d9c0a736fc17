import { RuleValidationError } from './errors';
import type { Action, Condition } from './types';
import { validateAction } from './validate-action';
import { validateCondition } from './validate-condition';

/** `x` as a Condition, or a RuleValidationError listing every issue. */
export function parseCondition(x: unknown, basePath = '/condition'): Condition {
  const issues = validateCondition(x, basePath);
  if (issues.length > 0) throw new RuleValidationError(issues);
  return x as Condition;
}

/** `x` as an Action, or a RuleValidationError listing every issue. */
export function parseAction(x: unknown, knownDomainActions?: string[], basePath = '/action'): Action {
  const issues = validateAction(x, basePath, knownDomainActions);
  if (issues.length > 0) throw new RuleValidationError(issues);
  return x as Action;
}
