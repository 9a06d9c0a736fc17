import type { JsonObject } from '@state-relay/rules';
import { DecodeError } from './errors';
import { describe, isPlainObject } from './json';

// Field readers shared by the decoders. Each failure names the field as `value.<name>`.

function invalid(field: string, expected: string, got: unknown): DecodeError {
  return new DecodeError('SCHEMA_INVALID', `value.${field}: expected ${expected}, got ${describe(got)}`);
}

export function readString(obj: JsonObject, field: string, maxLength: number): string {
  const v = obj[field];
  if (typeof v !== 'string' || v.length === 0 || v.length > maxLength) {
    throw invalid(field, `a non-empty string of at most ${maxLength} characters`, v);
  }
  return v;
}

export function readOptionalString(obj: JsonObject, field: string, maxLength: number): string | undefined {
  return obj[field] === undefined ? undefined : readString(obj, field, maxLength);
}

export function readFiniteNumber(obj: JsonObject, field: string): number {
  const v = obj[field];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(field, 'a finite number', v);
  return v;
}

export function readNonNegativeInteger(obj: JsonObject, field: string): number {
  const v = obj[field];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw invalid(field, 'a non-negative integer', v);
  return v;
}

export function readOptionalNonNegativeInteger(obj: JsonObject, field: string): number | undefined {
  return obj[field] === undefined ? undefined : readNonNegativeInteger(obj, field);
}

export function readObject(obj: JsonObject, field: string): JsonObject {
  const v = obj[field];
  if (!isPlainObject(v)) throw invalid(field, 'an object', v);
  return v;
}

export function readStringArray(obj: JsonObject, field: string, maxLength: number): string[] {
  const v = obj[field];
  if (!Array.isArray(v)) throw invalid(field, `an array of non-empty strings`, v);
  v.forEach((item, i) => {
    if (typeof item !== 'string' || item.length === 0 || item.length > maxLength) {
      throw invalid(`${field}[${i}]`, `a non-empty string of at most ${maxLength} characters`, item);
    }
  });
  return v as string[];
}

export function readOneOf<T extends string>(obj: JsonObject, field: string, allowed: readonly T[]): T {
  const v = obj[field];
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw invalid(field, `one of ${allowed.join(', ')}`, v);
  }
  return v as T;
}

/** The record's `key` field must equal the message key, or a consumer could write to the wrong entity. */
export function checkKeyMatches(obj: JsonObject, messageKey: string): string {
  const v = obj['key'];
  if (typeof v !== 'string') throw invalid('key', 'a string equal to the message key', v);
  if (v !== messageKey) throw new DecodeError('KEY_MISMATCH', 'value.key: does not equal the message key');
  return v;
}
