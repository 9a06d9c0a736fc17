import type { StoredEntity } from './types';

/** What readThrough needs from a store; TaskStore satisfies it, a test can fake it. */
export interface EntityReader {
  get(key: string): StoredEntity | undefined;
}

/**
 * The writes of one task's current batch, held in memory until the batch's Kafka transaction
 * commits and they are flushed with TaskStore.commit. One slot per key: a later put or
 * delete replaces the earlier one, so the flush (and the changelog) carries only the last
 * value per key. Entities are kept by reference; callers must not mutate them after put.
 */
export class WriteCache {
  private readonly slots = new Map<string, StoredEntity | null>();

  /** The cached entity, null if deleted in this batch, undefined if this batch has not touched the key. */
  get(key: string): StoredEntity | null | undefined {
    return this.slots.get(key);
  }

  put(key: string, entity: StoredEntity): void {
    this.slots.set(key, entity);
  }

  delete(key: string): void {
    this.slots.set(key, null);
  }

  get size(): number {
    return this.slots.size;
  }

  /** The last value per key (null = delete), ready for TaskStore.commit. */
  entries(): IterableIterator<[string, StoredEntity | null]> {
    return this.slots.entries();
  }

  clear(): void {
    this.slots.clear();
  }
}

/** The current entity as processing sees it: this batch's write if any, else the store's row. */
export function readThrough(cache: WriteCache, store: EntityReader, key: string): StoredEntity | undefined {
  const cached = cache.get(key);
  if (cached !== undefined) return cached ?? undefined;
  return store.get(key);
}
