import { readNonNegativeInteger, readObject, readStringArray } from './fields';
import { decodeJsonObject, decodeKey, encodeJson } from './json';
import { MAX_ID_LENGTH, type StoredEntity } from './types';

/** Kafka Streams' naming, so the topic reads as what it is to anyone who knows Streams. */
export function changelogTopicName(appId: string, storeName: string): string {
  for (const [name, part] of [['appId', appId], ['storeName', storeName]] as const) {
    if (!/^[A-Za-z0-9._-]+$/.test(part)) {
      throw new RangeError(`${name} must be non-empty and use only letters, digits, '.', '_' and '-' (Kafka topic characters)`);
    }
  }
  const topic = `${appId}-${storeName}-changelog`;
  if (topic.length > 249) throw new RangeError(`changelog topic name ${topic.length} characters exceeds Kafka's limit of 249`);
  return topic;
}

export function encodeStoredEntity(entity: StoredEntity): Buffer {
  return encodeJson({ version: entity.version, value: entity.value, commandIds: entity.commandIds });
}

/**
 * A changelog record: a null value is a tombstone (returns null). The number of remembered
 * command ids is not checked, so lowering MAX_REMEMBERED_COMMAND_IDS never makes old
 * records unreadable.
 */
export function decodeStoredEntity(key: Buffer | null, value: Buffer | null): StoredEntity | null {
  decodeKey(key);
  if (value === null) return null;
  const obj = decodeJsonObject(value);
  return {
    version: readNonNegativeInteger(obj, 'version'),
    value: readObject(obj, 'value'),
    commandIds: readStringArray(obj, 'commandIds', MAX_ID_LENGTH),
  };
}
