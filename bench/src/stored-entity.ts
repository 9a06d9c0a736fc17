import { decodeStoredEntity, encodeStoredEntity, type JsonObject, type StoredEntity } from './lib';

/**
 * An entity that remembers no command, in whatever shape the contracts package gives
 * StoredEntity: decoded from a record of the first changelog format (`commandIds`), which every
 * later decoder must still read. So seeding never names the fields that remember commands,
 * and keeps working while their format changes.
 */
const FIRST_FORMAT_FRESH = Buffer.from('{"version":1,"value":{},"commandIds":[]}');

let fresh: StoredEntity | undefined;

function freshTemplate(): StoredEntity {
  if (fresh) return fresh;
  try {
    fresh = decodeStoredEntity(Buffer.from('k'), FIRST_FORMAT_FRESH)!;
  } catch (err) {
    throw new Error(
      `the contracts package no longer decodes a first-format changelog record (${FIRST_FORMAT_FRESH.toString()}): ` +
        'bench/src/stored-entity.ts needs another way to build a fresh entity',
      { cause: err },
    );
  }
  return fresh;
}

/** The changelog value of an entity at `version` holding `value` that remembers no command. */
export function encodeFreshEntity(version: number, value: JsonObject): Buffer {
  return encodeStoredEntity({ ...freshTemplate(), version, value });
}

/**
 * Bytes of a changelog value spent on remembering commands: its size minus the size of the
 * same version and value remembering none (NaN for a tombstone).
 */
export function rememberedBytes(key: Buffer, value: Buffer | null): number {
  const entity = decodeStoredEntity(key, value);
  if (entity === null || value === null) return NaN;
  return value.length - encodeFreshEntity(entity.version, entity.value).length;
}
