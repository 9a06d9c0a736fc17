import { describeType, hasOwn, ownValue, quote } from './json';
import { RULE_LIMITS } from './limits';
import { fieldPathProblem, pathContains } from './paths';
import type { ValidationIssue } from './types';
import { checkJsonValue, isPlainObject, pointer } from './validate-json';

const FIELD_ACTIONS = ['set', 'unset', 'increment'] as const;
type FieldAction = (typeof FIELD_ACTIONS)[number];

/** One field an action names, kept to detect a field named twice. */
interface Target {
  field: string;
  where: FieldAction;
  path: string;
}

/**
 * Every way `x` fails to be an Action; empty when it is one. When `knownDomainActions` is given,
 * a domain action's name must be one of them.
 */
export function validateAction(x: unknown, basePath = '/action', knownDomainActions?: string[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!isPlainObject(x)) {
    issues.push({ path: basePath, message: `expected an action object, got ${describeType(x)}` });
  } else if (hasOwn(x, 'delete')) {
    checkDelete(x, basePath, issues);
  } else if (hasOwn(x, 'domain')) {
    checkDomain(x, basePath, issues, knownDomainActions);
  } else {
    checkFieldActions(x, basePath, issues);
  }
  return issues;
}

function checkDelete(x: Record<string, unknown>, path: string, issues: ValidationIssue[]): void {
  for (const key of Object.keys(x)) {
    if (key !== 'delete') issues.push({ path: pointer(path, key), message: '"delete" must stand alone' });
  }
  if (x.delete !== true) {
    issues.push({ path: pointer(path, 'delete'), message: `expected true, got ${describeType(x.delete)}` });
  }
}

function checkDomain(x: Record<string, unknown>, path: string, issues: ValidationIssue[], known?: string[]): void {
  for (const key of Object.keys(x)) {
    if (key !== 'domain' && key !== 'params') {
      const message = `unknown key ${quote(key)}; a domain action has only domain, params`;
      issues.push({ path: pointer(path, key), message });
    }
  }
  const name = x.domain;
  const namePath = pointer(path, 'domain');
  if (typeof name !== 'string' || name === '') {
    issues.push({ path: namePath, message: `expected a domain action name, got ${describeType(name)}` });
  } else if (known !== undefined && !known.includes(name)) {
    const expected = known.length === 0 ? 'no domain actions are registered' : `expected one of ${known.join(', ')}`;
    issues.push({ path: namePath, message: `unknown domain action ${quote(name)}; ${expected}` });
  }
  if (!hasOwn(x, 'params')) return;
  if (!isPlainObject(x.params)) {
    issues.push({ path: pointer(path, 'params'), message: `expected an object, got ${describeType(x.params)}` });
  } else {
    checkJsonValue(x.params, pointer(path, 'params'), issues);
  }
}

function checkFieldActions(x: Record<string, unknown>, path: string, issues: ValidationIssue[]): void {
  for (const key of Object.keys(x)) {
    if (!(FIELD_ACTIONS as readonly string[]).includes(key)) {
      const message = `unknown key ${quote(key)}; expected set, unset, increment, or delete, or domain`;
      issues.push({ path: pointer(path, key), message });
    }
  }
  const targets: Target[] = [];
  const issuesBefore = issues.length;
  if (hasOwn(x, 'set')) checkFieldMap(x.set, 'set', path, issues, targets);
  if (hasOwn(x, 'unset')) checkUnset(x.unset, path, issues, targets);
  if (hasOwn(x, 'increment')) checkFieldMap(x.increment, 'increment', path, issues, targets);

  if (targets.length === 0 && issues.length === issuesBefore) {
    const message = 'empty action: name at least one field in set, unset or increment, or use delete or domain';
    issues.push({ path, message });
  } else if (targets.length > RULE_LIMITS.maxActionFields) {
    issues.push({ path, message: `action names more than ${RULE_LIMITS.maxActionFields} fields` });
  } else {
    checkOverlaps(targets, issues);
  }
}

function checkFieldMap(
  m: unknown,
  where: 'set' | 'increment',
  base: string,
  issues: ValidationIssue[],
  targets: Target[],
): void {
  const mapPath = pointer(base, where);
  if (!isPlainObject(m)) {
    issues.push({ path: mapPath, message: `expected an object of field paths, got ${describeType(m)}` });
    return;
  }
  for (const field of Object.keys(m)) {
    const path = pointer(mapPath, field);
    const problem = fieldPathProblem(field);
    if (problem !== undefined) {
      issues.push({ path, message: problem });
      continue;
    }
    targets.push({ field, where, path });
    const value = ownValue(m, field);
    if (where === 'set') {
      checkJsonValue(value, path, issues);
    } else if (typeof value !== 'number' || !Number.isFinite(value)) {
      const got = typeof value === 'number' ? value : describeType(value);
      issues.push({ path, message: `expected a finite number, got ${got}` });
    }
  }
}

function checkUnset(list: unknown, base: string, issues: ValidationIssue[], targets: Target[]): void {
  const listPath = pointer(base, 'unset');
  if (!Array.isArray(list)) {
    issues.push({ path: listPath, message: `expected an array of field paths, got ${describeType(list)}` });
    return;
  }
  list.forEach((field: unknown, i) => {
    const path = pointer(listPath, i);
    const problem = fieldPathProblem(field);
    if (problem !== undefined) issues.push({ path, message: problem });
    else targets.push({ field: field as string, where: 'unset', path });
  });
}

/** A field named twice, or inside another named field, would make the result depend on the order of writes. */
function checkOverlaps(targets: Target[], issues: ValidationIssue[]): void {
  targets.forEach((t, i) => {
    const earlier = targets.slice(0, i).find((e) => pathContains(e.field, t.field) || pathContains(t.field, e.field));
    if (earlier === undefined) return;
    const message =
      earlier.field === t.field
        ? `field ${quote(t.field)} also appears in ${earlier.where}`
        : `field ${quote(t.field)} overlaps field ${quote(earlier.field)} in ${earlier.where}`;
    issues.push({ path: t.path, message });
  });
}
