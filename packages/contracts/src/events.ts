import { DecodeError } from './errors';
import { readObject, readOptionalString, readString } from './fields';
import { decodeJsonObject, decodeKey, describe, encodeJson } from './json';
import { parseIsoInstant } from './timestamp';
import { MAX_EVENT_TYPE_LENGTH, MAX_ID_LENGTH, type DomainEvent } from './types';

const AT_EXPECTED = 'value.at: expected a number (epoch ms) or ISO-8601 string';

/**
 * An events-topic record. The key must be a valid entity key; `at` is normalized to epoch
 * ms; `data` defaults to {}. Unknown top-level fields are dropped. Whether the event makes
 * sense for the domain (its type, its data) is the domain's call, not the codec's.
 */
export function decodeEvent(key: Buffer | null, value: Buffer | null): DomainEvent {
  decodeKey(key);
  const obj = decodeJsonObject(value);
  const event: DomainEvent = {
    type: readString(obj, 'type', MAX_EVENT_TYPE_LENGTH),
    at: readAt(obj['at']),
    data: obj['data'] === undefined ? {} : readObject(obj, 'data'),
  };
  const id = readOptionalString(obj, 'id', MAX_ID_LENGTH);
  if (id !== undefined) event.id = id;
  return event;
}

export function encodeEvent(event: DomainEvent): Buffer {
  return encodeJson(event);
}

function readAt(v: unknown): number {
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v) && v >= 0) return v;
    throw new DecodeError(
      'SCHEMA_INVALID',
      `${AT_EXPECTED}, got ${describe(v)} (epoch ms must be a non-negative integer)`,
    );
  }
  if (typeof v === 'string') {
    const ms = parseIsoInstant(v);
    if (ms !== undefined && ms >= 0) return ms;
    throw new DecodeError(
      'SCHEMA_INVALID',
      `${AT_EXPECTED}, got a string that is not an ISO-8601 date or date-time with offset at or after 1970`,
    );
  }
  throw new DecodeError('SCHEMA_INVALID', `${AT_EXPECTED}, got ${describe(v)}`);
}
