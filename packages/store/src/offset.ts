import { StoreInvalidArgumentError } from './errors';

// Kafka offsets are int64; kafkajs hands them over as decimal strings. SQLite INTEGER is
// int64 too, so they are bound and read as BigInt and never pass through a double.
const DECIMAL = /^(0|[1-9][0-9]{0,18})$/;
const INT64_MAX = '9223372036854775807';

/** A canonical non-negative int64 decimal string (no sign, no leading zeros). */
export function isOffset(offset: unknown): offset is string {
  return (
    typeof offset === 'string' && DECIMAL.test(offset) && (offset.length < INT64_MAX.length || offset <= INT64_MAX)
  );
}

export function assertOffset(offset: unknown, what: string): asserts offset is string {
  if (!isOffset(offset)) {
    throw new StoreInvalidArgumentError(
      `${what} must be a non-negative int64 decimal string, got ${JSON.stringify(offset)}`,
    );
  }
}

export function parseOffset(offset: unknown, what: string): bigint {
  assertOffset(offset, what);
  return BigInt(offset);
}

/** Order of two valid offsets without BigInt: canonical decimals compare by length, then digits. */
export function offsetGreater(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a > b;
}

export function formatOffset(value: bigint | number): string {
  return value.toString();
}
