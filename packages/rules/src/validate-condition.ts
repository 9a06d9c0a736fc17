import { durationProblem } from './duration';
import { describeType, hasOwn, quote } from './json';
import { RULE_LIMITS } from './limits';
import { isRelativeTime } from './operand';
import { fieldPathProblem } from './paths';
import type { ValidationIssue } from './types';
import { checkJsonValue, isPlainObject, pointer, unknownKeyIssues } from './validate-json';

const OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'exists', 'prefix'] as const;
type Operator = (typeof OPERATORS)[number];
const NODE_KINDS = ['all', 'any', 'not', 'field'] as const;
const LEAF_KEYS = ['field', 'op', 'value'] as const;

interface Walk {
  base: string;
  issues: ValidationIssue[];
  nodes: number;
  tooLarge: boolean;
}

/** Every way `x` fails to be a Condition; empty when it is one. Paths start at `basePath`. */
export function validateCondition(x: unknown, basePath = '/condition'): ValidationIssue[] {
  const walk: Walk = { base: basePath, issues: [], nodes: 0, tooLarge: false };
  checkNode(x, basePath, 1, walk);
  return walk.issues;
}

/** Counts nodes; once over the limit, reports once and stops walking so huge input stays cheap. */
function countNodes(walk: Walk, n: number): boolean {
  if (walk.tooLarge) return false;
  walk.nodes += n;
  if (walk.nodes <= RULE_LIMITS.maxNodes) return true;
  walk.tooLarge = true;
  walk.issues.push({ path: walk.base, message: `condition has more than ${RULE_LIMITS.maxNodes} nodes` });
  return false;
}

function checkNode(x: unknown, path: string, depth: number, walk: Walk): void {
  if (!countNodes(walk, 1)) return;
  const issue = (p: string, message: string) => walk.issues.push({ path: p, message });
  if (depth > RULE_LIMITS.maxDepth) {
    return void issue(path, `condition is nested deeper than ${RULE_LIMITS.maxDepth} levels`);
  }
  if (!isPlainObject(x)) return void issue(path, `expected a condition object, got ${describeType(x)}`);
  const kinds = NODE_KINDS.filter((k) => hasOwn(x, k));
  const [kind, second] = kinds;
  if (kind === undefined) return void issue(path, 'expected one of the keys all, any, not, field');
  if (second !== undefined) return void issue(path, `ambiguous condition: has both "${kind}" and "${second}"`);
  if (kind === 'field') return checkLeaf(x, path, walk);
  unknownKeyIssues(x, [kind], path, walk.issues);
  const inner = x[kind];
  if (kind === 'not') return checkNode(inner, pointer(path, 'not'), depth + 1, walk);
  if (!Array.isArray(inner)) {
    return void issue(pointer(path, kind), `expected an array of conditions, got ${describeType(inner)}`);
  }
  if (inner.length === 0) return void issue(pointer(path, kind), 'must not be empty');
  inner.forEach((child, i) => checkNode(child, pointer(pointer(path, kind), i), depth + 1, walk));
}

function checkLeaf(x: Record<string, unknown>, path: string, walk: Walk): void {
  const issues = walk.issues;
  unknownKeyIssues(x, LEAF_KEYS, path, issues);
  const fieldProblem = fieldPathProblem(x.field);
  if (fieldProblem !== undefined) issues.push({ path: pointer(path, 'field'), message: fieldProblem });

  const opPath = pointer(path, 'op');
  if (!hasOwn(x, 'op')) return void issues.push({ path: opPath, message: 'required' });
  const op = x.op;
  if (typeof op !== 'string') {
    return void issues.push({ path: opPath, message: `expected an operator string, got ${describeType(op)}` });
  }
  if (!(OPERATORS as readonly string[]).includes(op)) {
    const message = `unknown operator ${quote(op)}; expected one of ${OPERATORS.join(', ')}`;
    return void issues.push({ path: opPath, message });
  }
  checkValue(op as Operator, x, pointer(path, 'value'), walk);
}

function checkValue(op: Operator, x: Record<string, unknown>, path: string, walk: Walk): void {
  const issues = walk.issues;
  const issue = (message: string) => issues.push({ path, message });
  const v = x.value;
  if (!hasOwn(x, 'value')) {
    if (op !== 'exists') issue(`required for operator "${op}"`);
    return;
  }
  switch (op) {
    case 'eq':
    case 'ne':
      return checkOperand(v, path, issues);
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      // Ordering is defined only between two numbers or two strings; anything else could never match.
      if (typeof v === 'number' || typeof v === 'string' || isRelativeTime(v)) return checkOperand(v, path, issues);
      return void issue(`expected a number, a string or {"$ago": duration} for "${op}", got ${describeType(v)}`);
    case 'in':
      if (!Array.isArray(v)) return void issue(`expected an array of primitives, got ${describeType(v)}`);
      if (v.length === 0) return void issue('must not be empty');
      if (!countNodes(walk, v.length)) return;
      return v.forEach((item, i) => checkPrimitive(item, pointer(path, i), issues));
    case 'exists':
      if (typeof v !== 'boolean') issue(`expected a boolean, got ${describeType(v)}`);
      return;
    case 'prefix':
      if (typeof v !== 'string') issue(`expected a string, got ${describeType(v)}`);
      return;
  }
}

/** A literal JSON value, or a relative time; other "$"-keyed objects are reserved for future operands. */
function checkOperand(v: unknown, path: string, issues: ValidationIssue[]): void {
  if (!isPlainObject(v)) return checkJsonValue(v, path, issues);
  const keys = Object.keys(v);
  if (hasOwn(v, '$ago')) {
    for (const k of keys) {
      if (k !== '$ago') issues.push({ path: pointer(path, k), message: `unexpected key ${quote(k)} next to "$ago"` });
    }
    const problem = durationProblem(v.$ago);
    if (problem !== undefined) issues.push({ path: pointer(path, '$ago'), message: problem });
    return;
  }
  const reserved = keys.find((k) => k.startsWith('$'));
  if (reserved !== undefined) {
    const message = `unknown operand ${quote(reserved)}; the only operand is {"$ago": duration}`;
    return void issues.push({ path: pointer(path, reserved), message });
  }
  checkJsonValue(v, path, issues);
}

function checkPrimitive(item: unknown, path: string, issues: ValidationIssue[]): void {
  if (item === null || typeof item === 'string' || typeof item === 'boolean') return;
  if (typeof item === 'number') return checkJsonValue(item, path, issues);
  issues.push({ path, message: `expected a string, number, boolean or null, got ${describeType(item)}` });
}
