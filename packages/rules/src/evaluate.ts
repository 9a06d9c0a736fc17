import { hasOwn, jsonEqual } from './json';
import { resolveOperand } from './operand';
import { lookupField } from './paths';
import { compareCodePoints, startsWithCodePoints } from './strings';
import type { ComparisonOp, Condition, EvalContext, JsonObject, JsonValue } from './types';

type Leaf = Extract<Condition, { field: string }>;
type Ordering = Exclude<ComparisonOp, 'eq' | 'ne'>;

/**
 * Whether `record` satisfies `cond` at `ctx.asOf`. Total over records: a missing field or a value
 * of another type makes a comparison false, never an error. Conditions are expected to be valid
 * (see parseCondition); a relative time with a bad duration throws RuleValidationError.
 */
export function evaluateCondition(cond: Condition, record: JsonObject, ctx: EvalContext): boolean {
  if (hasOwn(cond, 'all')) return (cond as { all: Condition[] }).all.every((c) => evaluateCondition(c, record, ctx));
  if (hasOwn(cond, 'any')) return (cond as { any: Condition[] }).any.some((c) => evaluateCondition(c, record, ctx));
  if (hasOwn(cond, 'not')) return !evaluateCondition((cond as { not: Condition }).not, record, ctx);
  return evaluateLeaf(cond as Leaf, record, ctx);
}

function evaluateLeaf(leaf: Leaf, record: JsonObject, ctx: EvalContext): boolean {
  const lookup = lookupField(record, leaf.field);
  const value = lookup.found ? lookup.value : undefined;
  switch (leaf.op) {
    case 'exists': {
      const present = value !== undefined && value !== null;
      return leaf.value === false ? !present : present;
    }
    case 'eq':
      return value !== undefined && jsonEqual(value, resolveOperand(leaf.value, ctx));
    case 'ne':
      return !(value !== undefined && jsonEqual(value, resolveOperand(leaf.value, ctx)));
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return value !== undefined && compare(leaf.op, value, resolveOperand(leaf.value, ctx));
    case 'in':
      return isPrimitive(value) && Array.isArray(leaf.value) && leaf.value.some((p) => p === value);
    case 'prefix':
      return typeof value === 'string' && typeof leaf.value === 'string' && startsWithCodePoints(value, leaf.value);
    default:
      return false;
  }
}

/** Ordering exists only between two numbers or two strings; every other pairing is false. */
function compare(op: Ordering, a: JsonValue, b: JsonValue): boolean {
  if (typeof a === 'number' && typeof b === 'number') return holds(op, a, b);
  if (typeof a === 'string' && typeof b === 'string') return holds(op, compareCodePoints(a, b), 0);
  return false;
}

function holds(op: Ordering, x: number, y: number): boolean {
  switch (op) {
    case 'lt':
      return x < y;
    case 'lte':
      return x <= y;
    case 'gt':
      return x > y;
    case 'gte':
      return x >= y;
  }
}

function isPrimitive(v: JsonValue | undefined): v is string | number | boolean | null {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}
