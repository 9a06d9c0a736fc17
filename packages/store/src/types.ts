// The entity shape is the changelog contract's; the store persists it as is.
import type { StoredEntity } from '@state-relay/contracts';
export type { StoredEntity };

/** What the scanner's replica keeps of an entity: command ids are the owner's business. */
export interface ReplicaEntity {
  version: number;
  value: Record<string, unknown>;
}

export interface ReplicaRow extends ReplicaEntity {
  key: string;
}

/** One changelog record as the replica applies it, bytes as fetched; `value: null` is a tombstone. */
export interface ChangelogRecord {
  partition: number;
  /** Kafka offset, decimal string (kafkajs style). */
  offset: string;
  /** The message key: its UTF-8 bytes or the decoded string. */
  key: string | Buffer;
  value: Buffer | null;
}

/** A value that can be bound to a `?` of a filter expression (booleans bind as 1/0, like JSON true/false in json_extract). */
export type FilterParam = string | number | bigint | boolean | null;

export interface ChunkRequest {
  /** Walk keys strictly after this one; null starts at the first key. */
  afterKey: string | null;
  /** How many keys to walk (not how many to return). */
  limit: number;
  /**
   * SQL boolean expression over the JSON TEXT column `record` (a whole changelog record: the
   * entity's value is at `$.value`), with `?` placeholders.
   */
  filterSql?: string;
  filterParams?: readonly FilterParam[];
}

export interface Chunk {
  /** Walked rows that matched the filter (all walked rows when there is no filter), in key order. */
  rows: ReplicaRow[];
  /** The last key walked; pass it as the next `afterKey`. Null when nothing was left to walk. */
  lastKey: string | null;
  /** Number of keys walked (matched or not). */
  walked: number;
}

export interface WalCheckpointResult {
  /** True when the checkpoint could not complete because a reader or writer was in the way. */
  busy: boolean;
  /** Frames in the WAL before the checkpoint (-1 when not in WAL mode). */
  walPages: number;
  /** Frames copied back into the database file. */
  checkpointed: number;
}
