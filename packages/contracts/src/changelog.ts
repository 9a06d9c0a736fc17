import { isSeen, seenOf } from './command-id';
import { DecodeError } from './errors';
import { readNonNegativeInteger, readObject, readStringArray } from './fields';
import { decodeJsonObject, decodeKey, describe, encodeJson, isPlainObject } from './json';
import { MAX_ID_LENGTH, type StoredEntity } from './types';

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
