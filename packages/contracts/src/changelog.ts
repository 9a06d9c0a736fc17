import { isSeen, seenOf } from './command-id';
import { DecodeError } from './errors';
import { readNonNegativeInteger, readObject, readStringArray } from './fields';
import { decodeJsonObject, decodeKey, describe, encodeJson, isPlainObject } from './json';
import { MAX_ID_LENGTH, MAX_JSON_DEPTH, type StoredEntity } from './types';

/** Kafka Streams' naming, so the topic reads as what it is to anyone who knows Streams. */
export function changelogTopicName(appId: string, storeName: string): string {
  for (const [name, part] of [
    ['appId', appId],
    ['storeName', storeName],
  ] as const) {
    if (!/^[A-Za-z0-9._-]+$/.test(part)) {
      throw new RangeError(
        `${name} must be non-empty and use only letters, digits, '.', '_' and '-' (Kafka topic characters)`,
      );
    }
  }
  const topic = `${appId}-${storeName}-changelog`;
  if (topic.length > 249)
    throw new RangeError(`changelog topic name ${topic.length} characters exceeds Kafka's limit of 249`);
  return topic;
}

/** `{"version":…,"value":{…},"seen":"…"}`: the bytes the changelog, the task stores and the replica all hold. */
export function encodeStoredEntity(entity: StoredEntity): Buffer {
  return encodeJson({ version: entity.version, value: entity.value, seen: entity.seen });
}

/**
 * At least the bytes encodeStoredEntity(entity) would take, found without encoding it (a walk of
 * the value: every string counted as if each UTF-16 unit took 6 bytes, the longest escape, every
 * number 25 characters); Infinity when the entity holds anything but plain JSON data (a toJSON
 * method, a class instance, a bigint, nesting deeper than MAX_JSON_DEPTH or a cycle), which only
 * encoding can measure or refuse. For a limit check that encodes only when the bound is over it.
 */
export function storedEntitySizeBound(entity: StoredEntity): number {
  // {"version":,"value":,"seen":}
  const frame = 30;
  if (typeof entity.version !== 'number' || typeof entity.seen !== 'string') return Infinity;
  return frame + NUMBER_BOUND + stringBound(entity.seen) + valueBound(entity.value, 1);
}

/** JSON.stringify's longest number, e.g. -1.2345678901234567e-123 (24), with room to spare. */
const NUMBER_BOUND = 25;

function stringBound(s: string): number {
  return 2 + 6 * s.length;
}

function valueBound(v: unknown, depth: number): number {
  switch (typeof v) {
    case 'string':
      return stringBound(v);
    case 'number':
      return NUMBER_BOUND;
    case 'boolean':
      return 5;
    case 'object':
      break;
    default:
      return Infinity; // undefined, bigint, symbol, function: let the encoder decide
  }
  if (v === null) return 4;
  if (depth > MAX_JSON_DEPTH) return Infinity;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return Infinity;
    let n = 2 + v.length;
    for (let i = 0; i < v.length; i++) {
      n += valueBound(v[i], depth + 1);
      if (n === Infinity) return n;
    }
    return n;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return Infinity;
  const o = v as Record<string, unknown>;
  if (typeof o.toJSON === 'function') return Infinity;
  let n = 2;
  for (const key of Object.keys(o)) {
    n += stringBound(key) + 2 + valueBound(o[key], depth + 1);
    if (n === Infinity) return n;
  }
  return n;
}

/**
 * A changelog record: a null value is a tombstone (returns null). Reads both formats: `seen`
 * (command digests) and the first format's `commandIds` (ids, turned into digests). The
 * number of remembered commands is not checked, so lowering MAX_REMEMBERED_COMMAND_IDS never
 * makes old records unreadable.
 */
export function decodeStoredEntity(key: Buffer | null, value: Buffer | null): StoredEntity | null {
  decodeKey(key);
  if (value === null) return null;
  return entityFields(decodeJsonObject(value));
}

/**
 * A stored record read back from SQLite, where only records this contract wrote (the
 * processor, or a byte copy of its changelog) can be: parsed and its fields checked, without
 * decodeStoredEntity's size, UTF-8 and nesting checks, which the writer already made.
 */
export function parseStoredEntity(text: string): StoredEntity {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new DecodeError('NOT_JSON', 'value: not valid JSON', err);
  }
  if (!isPlainObject(parsed)) {
    throw new DecodeError('SCHEMA_INVALID', `value: expected a JSON object, got ${describe(parsed)}`);
  }
  return entityFields(parsed);
}

function entityFields(obj: Record<string, unknown>): StoredEntity {
  const fields = obj as Parameters<typeof readObject>[0];
  const version = readNonNegativeInteger(fields, 'version');
  const value = readObject(fields, 'value');
  const seen = obj.seen;
  if (isSeen(seen)) return { version, value, seen };
  if (seen === undefined && obj.commandIds !== undefined) {
    return { version, value, seen: seenOf(readStringArray(fields, 'commandIds', MAX_ID_LENGTH)) };
  }
  throw new DecodeError(
    'SCHEMA_INVALID',
    `value.seen: expected whole 11-character command digests (base64url), got ${describe(seen)}`,
  );
}
