export { TaskStore, type TaskStoreOptions, type StoreChange } from './task-store';
export { WriteCache, readThrough, type EntityReader } from './write-cache';
export { ReplicaStore, type ReplicaStoreOptions } from './replica-store';
export { SqliteFile, type Schema } from './sqlite-file';
export type {
  StoredEntity,
  ReplicaEntity,
  ReplicaRow,
  ChangelogRecord,
  ChunkRequest,
  Chunk,
  FilterParam,
  WalCheckpointResult,
} from './types';
export {
  StoreErrorCodes,
  type StoreErrorCode,
  StoreError,
  StoreInvalidArgumentError,
  StoreInvalidFilterError,
  StoreClosedError,
  StoreOpenError,
  StoreSchemaMismatchError,
  StoreCorruptRowError,
  StoreBusyError,
  StoreSqliteError,
} from './errors';
