import { RULE_LIMITS } from './limits';
import { describeType, isJsonObject, ownValue, quote } from './json';
import type { ValidationIssue } from './types';

/** Appends one segment to a JSON-pointer-like path, escaping "~" and "/" as RFC 6901 does. */
export function pointer(base: string, segment: string | number): string {
  return `${base}/${String(segment).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/** An object literal as JSON.parse makes it: no class instances (Date, Map, ...). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (!isJsonObject(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export function unknownKeyIssues(
  x: Record<string, unknown>,
  allowed: readonly string[],
  path: string,
  issues: ValidationIssue[],
): void {
  for (const key of Object.keys(x)) {
    if (!allowed.includes(key)) {
      issues.push({ path: pointer(path, key), message: `unknown key ${quote(key)}; expected ${allowed.join(', ')}` });
    }
  }
}

/** Checks that `v` is plain JSON: finite numbers, plain objects, no "__proto__" keys, bounded depth. */
export function checkJsonValue(v: unknown, path: string, issues: ValidationIssue[], depth = 1): void {
  if (depth > RULE_LIMITS.maxDepth) {
    issues.push({ path, message: `value is nested deeper than ${RULE_LIMITS.maxDepth} levels` });
    return;
  }
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) issues.push({ path, message: `expected a finite number, got ${v}` });
    return;
  }
  if (Array.isArray(v)) {
    v.forEach((item, i) => checkJsonValue(item, pointer(path, i), issues, depth + 1));
    return;
  }
  if (!isPlainObject(v)) {
    issues.push({ path, message: `expected a JSON value, got ${describeType(v)}` });
    return;
  }
  for (const key of Object.keys(v)) {
    if (key === '__proto__') {
      issues.push({ path: pointer(path, key), message: 'key "__proto__" is not allowed' });
    } else {
      checkJsonValue(ownValue(v, key), pointer(path, key), issues, depth + 1);
    }
  }
}
