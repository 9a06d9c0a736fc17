// Every failure the store reports. Callers decide retry from `retriable`, never from text.
import { CodedError, type CodedErrorOptions } from '@state-relay/rules';

export const StoreErrorCodes = {
  INVALID_ARGUMENT: 'STORE_INVALID_ARGUMENT',
  INVALID_FILTER: 'STORE_INVALID_FILTER',
  CLOSED: 'STORE_CLOSED',
  OPEN_FAILED: 'STORE_OPEN_FAILED',
  SCHEMA_MISMATCH: 'STORE_SCHEMA_MISMATCH',
  CORRUPT_ROW: 'STORE_CORRUPT_ROW',
  BUSY: 'STORE_BUSY',
  SQLITE_FAILED: 'STORE_SQLITE_FAILED',
} as const;

export type StoreErrorCode = (typeof StoreErrorCodes)[keyof typeof StoreErrorCodes];

export type StoreErrorOptions = Pick<CodedErrorOptions, 'cause' | 'retriable'>;

/** Base of every error this package throws; `name` is the subclass's. */
export class StoreError extends CodedError<StoreErrorCode> {
  constructor(code: StoreErrorCode, message: string, options: StoreErrorOptions = {}) {
    super(code, message, options);
    this.name = new.target.name;
  }
}

/** A caller passed a value the store cannot accept (bad key, offset, entity, limit...). */
export class StoreInvalidArgumentError extends StoreError {
  static readonly code = StoreErrorCodes.INVALID_ARGUMENT;
  constructor(message: string) {
    super(StoreInvalidArgumentError.code, message);
  }
}

/** The filter SQL does not compile, is not read-only, or its params do not fit it. */
export class StoreInvalidFilterError extends StoreError {
  static readonly code = StoreErrorCodes.INVALID_FILTER;
  constructor(message: string, cause?: unknown) {
    super(StoreInvalidFilterError.code, message, { cause });
  }
}

/** The store was used after close(). */
export class StoreClosedError extends StoreError {
  static readonly code = StoreErrorCodes.CLOSED;
  constructor(path: string) {
    super(StoreClosedError.code, `store ${path} is closed`);
  }
}

/** The SQLite file could not be opened or prepared (permissions, not a database, busy...). */
export class StoreOpenError extends StoreError {
  static readonly code = StoreErrorCodes.OPEN_FAILED;
  constructor(path: string, cause: unknown) {
    super(StoreOpenError.code, `cannot open store ${path}: ${messageOf(cause)}`, {
      cause,
      retriable: isBusy(cause),
    });
  }
}

/** The file was written by a newer schema than this code knows. */
export class StoreSchemaMismatchError extends StoreError {
  static readonly code = StoreErrorCodes.SCHEMA_MISMATCH;
  constructor(path: string, found: number, expected: number) {
    super(StoreSchemaMismatchError.code, `store ${path} has schema version ${found}, this code knows ${expected}`);
  }
}

/** A stored row does not decode (not JSON, or not the expected shape). */
export class StoreCorruptRowError extends StoreError {
  static readonly code = StoreErrorCodes.CORRUPT_ROW;
  constructor(key: string, cause?: unknown) {
    super(StoreCorruptRowError.code, `row for key ${JSON.stringify(key)} does not decode`, { cause });
  }
}

/** Another connection holds the lock past busy_timeout; retrying later may succeed. */
export class StoreBusyError extends StoreError {
  static readonly code = StoreErrorCodes.BUSY;
  constructor(operation: string, cause: unknown) {
    super(StoreBusyError.code, `${operation}: database is busy`, { cause, retriable: true });
  }
}

/** Any other SQLite failure (I/O error, disk full, corruption). */
export class StoreSqliteError extends StoreError {
  static readonly code = StoreErrorCodes.SQLITE_FAILED;
  constructor(operation: string, cause: unknown) {
    super(StoreSqliteError.code, `${operation}: ${messageOf(cause)}`, { cause });
  }
}

/** SqliteError from better-sqlite3 carries the extended result code, e.g. SQLITE_BUSY_SNAPSHOT. */
function sqliteCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  const code = (err as { code: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

function isBusy(err: unknown): boolean {
  const code = sqliteCode(err);
  return code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Translate what a SQLite call threw. StoreErrors and errors not raised by SQLite (e.g. from
 * a caller's iterator) pass through unchanged: they are not the store's failures to name.
 */
export function toStoreError(operation: string, err: unknown): unknown {
  if (err instanceof StoreError || sqliteCode(err) === undefined) return err;
  return isBusy(err) ? new StoreBusyError(operation, err) : new StoreSqliteError(operation, err);
}
