import { isSeen } from '@state-relay/contracts';
import { StoreCorruptRowError, StoreInvalidArgumentError } from './errors';
import type { StoredEntity } from './types';

// Rows hold JSON text. Encoding checks the shape cheaply (this runs per row inside commits
// that should reach hundreds of thousands of rows per second); decoding trusts nothing.

export function assertKey(key: unknown): asserts key is string {
  if (typeof key !== 'string') throw new StoreInvalidArgumentError(`key must be a string, got ${typeof key}`);
}

export function assertEntity(key: string, entity: unknown): asserts entity is StoredEntity {
  const e = entity as Partial<StoredEntity> | null;
  if (
    typeof e !== 'object' ||
    e === null ||
    !Number.isSafeInteger(e.version) ||
    !isObject(e.value) ||
    !isSeen(e.seen)
  ) {
    throw new StoreInvalidArgumentError(
      `entity for key ${JSON.stringify(key)} must be { version: integer, value: object, seen: command digests }`,
    );
  }
}

export function encodeJson(key: string, value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    throw new StoreInvalidArgumentError(
      `entity for key ${JSON.stringify(key)} is not JSON-serialisable: ${(err as Error).message}`,
    );
  }
}

export function decodeValue(key: string, text: unknown): Record<string, unknown> {
  const value = parse(key, text);
  if (!isObject(value)) throw new StoreCorruptRowError(key, new Error('value is not a JSON object'));
  return value;
}

function parse(key: string, text: unknown): unknown {
  if (typeof text !== 'string') {
    throw new StoreCorruptRowError(key, new Error(`expected JSON text, got ${typeof text}`));
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new StoreCorruptRowError(key, err);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function assertLimit(limit: unknown): asserts limit is number {
  if (!Number.isSafeInteger(limit) || (limit as number) < 1) {
    throw new StoreInvalidArgumentError(`limit must be a positive integer, got ${String(limit)}`);
  }
}

export function assertAfterKey(afterKey: unknown): asserts afterKey is string | null {
  if (afterKey !== null && typeof afterKey !== 'string') {
    throw new StoreInvalidArgumentError(`afterKey must be a string or null, got ${typeof afterKey}`);
  }
}
