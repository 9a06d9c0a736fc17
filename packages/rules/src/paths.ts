import { RULE_LIMITS } from './limits';
import { describeType, isJsonObject, ownValue, quote } from './json';
import type { FieldPath, JsonValue } from './types';

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Segments that could reach an object's prototype if a path were ever used for plain property access. */
const RESERVED_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

/** Why `path` is not a valid field path, or undefined when it is. */
export function fieldPathProblem(path: unknown): string | undefined {
  if (typeof path !== 'string') return `expected a field path string, got ${describeType(path)}`;
  if (path === '') return 'field path must not be empty';
  const segments = path.split('.');
  if (segments.length > RULE_LIMITS.maxPathSegments) {
    const max = RULE_LIMITS.maxPathSegments;
    return `field path ${quote(path)} has ${segments.length} segments; at most ${max} are allowed`;
  }
  for (const s of segments) {
    if (RESERVED_SEGMENTS.has(s)) return `field path ${quote(path)}: segment ${quote(s)} is reserved and not allowed`;
    if (!SEGMENT.test(s)) return `field path ${quote(path)}: segment ${quote(s)} must match [A-Za-z_][A-Za-z0-9_]*`;
  }
  return undefined;
}

export function isFieldPath(path: unknown): path is FieldPath {
  return fieldPathProblem(path) === undefined;
}

export function pathSegments(path: FieldPath): string[] {
  return path.split('.');
}

/** true when `inner` is `outer` or lies inside it ("a.b" is inside "a", "ab" is not). */
export function pathContains(outer: FieldPath, inner: FieldPath): boolean {
  return inner === outer || inner.startsWith(outer + '.');
}

export type FieldLookup = { found: true; value: JsonValue } | { found: false };

/**
 * Looks a field up through own data properties of plain objects only: arrays are not entered, the
 * prototype chain is never walked, getters never run, and `undefined` counts as missing (as in JSON).
 */
export function lookupField(record: unknown, path: FieldPath): FieldLookup {
  if (!isFieldPath(path)) return { found: false };
  let current: unknown = record;
  for (const segment of pathSegments(path)) {
    if (!isJsonObject(current)) return { found: false };
    current = ownValue(current, segment);
  }
  return current === undefined ? { found: false } : { found: true, value: current as JsonValue };
}
