import { Draft } from './draft';
import { RuleApplyError } from './errors';
import { cloneJson, hasOwn, isJsonObject, ownValue, quote } from './json';
import type { Action, ActionOutcome, DomainAction, EvalContext, FieldPath, JsonObject, JsonValue } from './types';

type FieldActions = { set?: Record<FieldPath, JsonValue>; unset?: FieldPath[]; increment?: Record<FieldPath, number> };

/**
 * The outcome of applying `action` to `current`. Pure: `current` is never mutated; an update
 * returns a new object that copies the objects on each changed path and shares the rest.
 * Throws RuleApplyError when the action does not fit the value (e.g. increment of a string).
 */
export function applyAction(
  action: Action,
  current: JsonObject,
  ctx: EvalContext,
  domainActions: Record<string, DomainAction> = {},
): ActionOutcome {
  if (hasOwn(action, 'delete')) return { kind: 'delete' };
  if (hasOwn(action, 'domain')) {
    const { domain, params } = action as { domain: string; params?: JsonObject };
    return applyDomainAction(domain, params ?? {}, current, ctx, domainActions);
  }
  const { set = {}, unset = [], increment = {} } = action as FieldActions;
  const draft = new Draft(current);
  for (const field of Object.keys(set)) draft.set(field, ownValue(set, field) as JsonValue);
  for (const field of unset) draft.unset(field);
  for (const field of Object.keys(increment)) draft.increment(field, ownValue(increment, field) as number);
  return { kind: 'update', value: draft.root };
}

function applyDomainAction(
  name: string,
  params: JsonObject,
  current: JsonObject,
  ctx: EvalContext,
  domainActions: Record<string, DomainAction>,
): ActionOutcome {
  const fn = hasOwn(domainActions, name) ? domainActions[name] : undefined;
  if (typeof fn !== 'function') throw new RuleApplyError(`unknown domain action ${quote(name)}`);
  let outcome: ActionOutcome;
  try {
    // Copies, so a domain action that mutates its input cannot touch the caller's state.
    outcome = fn(cloneJson(current) as JsonObject, cloneJson(params) as JsonObject, ctx);
  } catch (err) {
    if (err instanceof RuleApplyError) throw err;
    // A pure function fails the same way every time: report it as this command failing to apply
    // (non-retriable), keeping the original error as the cause.
    const reason = err instanceof Error ? err.message : String(err);
    throw new RuleApplyError(`domain action ${quote(name)} failed: ${reason}`, { cause: err });
  }
  if (outcome?.kind === 'delete' || (outcome?.kind === 'update' && isJsonObject(outcome.value))) return outcome;
  throw new RuleApplyError(`domain action ${quote(name)} returned neither an update nor a delete`);
}
