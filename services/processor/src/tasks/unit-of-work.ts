import { WriteCache } from '@state-relay/store';
import { encodeStoredEntity, type StoredEntity } from '@state-relay/contracts';
import type { Message } from 'kafkajs';

/**
 * What one task has folded since its last commit began: the changed entities (last value
 * per key), the command results, the dead letters, the next offset of each input topic, and
 * the input records' timestamps (for the commit-latency metric). One Kafka transaction
 * commits a unit whole, or nothing of it is visible.
 */
export class UnitOfWork {
  readonly cache = new WriteCache();
  /**
   * Key -> the encoded entity in `cache`, when the fold had to encode it to measure it against
   * ENTITY_MAX_BYTES (see foldInput); the others are encoded once, at commit (unitChanges).
   */
  readonly encoded = new Map<string, Buffer>();
  readonly results: Message[] = [];
  readonly deadLetters: Message[] = [];
  /** Input topic -> the offset to commit (last folded offset + 1). */
  readonly offsets = new Map<string, bigint>();
  /** Input topic -> timestamps (epoch ms) of the records folded from it. */
  readonly timestamps = new Map<string, number[]>();
  readonly eventOutcomes = { changed: 0, unchanged: 0, dead_letter: 0 };
  readonly commandOutcomes = new Map<string, number>();
  /** Input records folded (consumed records; generated inputs are not counted). */
  records = 0;
  /** Of `records`, those from the commands topic, and the time (ms) folding them took (the command share). */
  commands = 0;
  commandMs = 0;

  /** Nothing to commit. Offsets alone count: a batch can end in transaction markers only. */
  get isEmpty(): boolean {
    return (
      this.offsets.size === 0 &&
      this.records === 0 &&
      this.cache.size === 0 &&
      this.results.length === 0 &&
      this.deadLetters.length === 0
    );
  }

  /** `bytes`: the entity's encoding when the fold already made it (see foldInput); else encoded at commit. */
  put(key: string, entity: StoredEntity, bytes?: Buffer): void {
    this.cache.put(key, entity);
    if (bytes) this.encoded.set(key, bytes);
    else this.encoded.delete(key);
  }

  delete(key: string): void {
    this.cache.delete(key);
    this.encoded.delete(key);
  }

  countCommand(outcome: string): void {
    this.commandOutcomes.set(outcome, (this.commandOutcomes.get(outcome) ?? 0) + 1);
  }
}

/**
 * The current entity as processing sees it: the open unit's write, else the committing
 * unit's, else the store's committed row. `null` in a unit means deleted there.
 */
export function currentEntity(
  key: string,
  open: UnitOfWork,
  committing: UnitOfWork | undefined,
  read: (key: string) => StoredEntity | undefined,
): StoredEntity | undefined {
  const mine = open.cache.get(key);
  if (mine !== undefined) return mine ?? undefined;
  const pending = committing?.cache.get(key);
  if (pending !== undefined) return pending ?? undefined;
  return read(key);
}

/**
 * The unit's changes as the changelog and then SQLite get them: the last value per key, encoded
 * (null: a tombstone), in the order they go to SQLite.
 */
export function unitChanges(unit: UnitOfWork): Array<[string, Buffer | null]> {
  const changes: Array<[string, Buffer | null]> = [];
  for (const [key, entity] of unit.cache.entries()) {
    changes.push([key, entity ? (unit.encoded.get(key) ?? encodeStoredEntity(entity)) : null]);
  }
  return changes;
}
