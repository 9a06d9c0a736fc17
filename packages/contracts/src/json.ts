import { isUtf8 } from 'node:buffer';
import type { JsonObject, JsonValue } from '@state-relay/rules';
import { DecodeError } from './errors';
import { MAX_JSON_DEPTH, MAX_KEY_BYTES, MAX_VALUE_BYTES } from './types';

/** JSON, UTF-8. Throws on values JSON cannot represent rather than writing `undefined`. */
export function encodeJson(value: object | JsonValue): Buffer {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('encodeJson: value has no JSON representation');
  return Buffer.from(text, 'utf8');
}

/** The entity key as a string: non-empty, valid UTF-8 (so it re-encodes to the same bytes and partition). */
export function decodeKey(key: Buffer | null): string {
  if (key === null || key.length === 0) throw new DecodeError('KEY_MISSING', 'key: expected a non-empty message key');
  if (key.length > MAX_KEY_BYTES) {
    throw new DecodeError('KEY_INVALID', `key: ${key.length} bytes exceeds the limit of ${MAX_KEY_BYTES} bytes`);
  }
  if (!isUtf8(key)) throw new DecodeError('KEY_INVALID', 'key: not valid UTF-8');
  return key.toString('utf8');
}

/** Parses a record value that must be one JSON object, with the checks every topic shares. */
export function decodeJsonObject(value: Buffer | null): JsonObject {
  if (value === null) throw new DecodeError('VALUE_MISSING', 'value: expected a JSON object, got a null value');
  if (value.length > MAX_VALUE_BYTES) {
    throw new DecodeError(
      'SCHEMA_INVALID',
      `value: ${value.length} bytes exceeds the limit of ${MAX_VALUE_BYTES} bytes`,
    );
  }
  if (!isUtf8(value)) throw new DecodeError('NOT_JSON', 'value: not valid UTF-8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch (err) {
    throw new DecodeError('NOT_JSON', `value: not valid JSON (${syntaxProblem(err)})`, err);
  }
  if (!isPlainObject(parsed)) {
    throw new DecodeError('SCHEMA_INVALID', `value: expected a JSON object, got ${describe(parsed)}`);
  }
  checkShape(parsed);
  return parsed;
}

/**
 * JSON.parse makes `__proto__` an own property; a later spread or merge would then set the
 * prototype. Reject it anywhere, and bound the depth. Iterative, so hostile nesting cannot
 * overflow the stack here.
 */
function checkShape(root: JsonObject): void {
  const stack: Array<{ node: JsonValue; path: string; depth: number }> = [{ node: root, path: 'value', depth: 1 }];
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > MAX_JSON_DEPTH) {
      throw new DecodeError('SCHEMA_INVALID', `${path}: nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    if (Array.isArray(node)) {
      node.forEach((item, i) => stack.push({ node: item, path: `${path}[${i}]`, depth: depth + 1 }));
      continue;
    }
    for (const key of Object.keys(node)) {
      if (key === '__proto__') throw new DecodeError('SCHEMA_INVALID', `${path}.__proto__: forbidden key`);
      stack.push({ node: node[key]!, path: `${path}.${key}`, depth: depth + 1 });
    }
  }
}

/**
 * JSON.parse's message without the input: V8 quotes up to ~10 characters around the error
 * (`Unexpected token 'Q', "QZX..." is not valid JSON`), and a reason must not quote untrusted text.
 */
function syntaxProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  return message === '' || message.includes('"') ? 'unexpected character' : message;
}

export function isPlainObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What a value is, for error reasons, without quoting untrusted content. */
export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return v.length === 0 ? 'an empty string' : `a string of ${v.length} characters`;
  if (typeof v === 'number') return Number.isFinite(v) ? `the number ${v}` : 'a non-finite number';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}
