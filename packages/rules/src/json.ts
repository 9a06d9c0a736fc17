import type { JsonObject, JsonValue } from './types';

export function hasOwn(o: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

/** A non-null, non-array object: what a JSON object parses to. */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads an own data property without walking the prototype chain or running getters. */
export function ownValue(o: object, key: string): unknown {
  const d = Object.getOwnPropertyDescriptor(o, key);
  return d !== undefined && 'value' in d ? d.value : undefined;
}

/** Writes an own property; unlike `o[key] = v`, a key such as "__proto__" cannot reach the prototype. */
export function defineOwn(o: object, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
}

export function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** Deep equality of JSON values: key order is irrelevant, numbers compare with ===. Total on any input. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => hasOwn(b, k) && jsonEqual(ownValue(a, k), ownValue(b, k)));
}

/** Deep copy of a JSON value built with own-property writes only. */
export function cloneJson(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(cloneJson);
  if (isJsonObject(v)) {
    const out: JsonObject = {};
    for (const k of Object.keys(v)) defineOwn(out, k, cloneJson(ownValue(v, k) as JsonValue));
    return out;
  }
  return v;
}

/** Copy of one object level (children shared): the unit of copy-on-write. */
export function copyObject(o: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(o)) defineOwn(out, k, ownValue(o, k));
  return out;
}

/** A user-supplied string for an error message: JSON-quoted and cut short. */
export function quote(s: string): string {
  return JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}…` : s);
}
