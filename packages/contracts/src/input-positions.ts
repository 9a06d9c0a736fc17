import type { HeaderValue } from './dead-letter';

/**
 * The changelog header that names, for the unit of work that wrote the record, the next offset
 * of each input topic of its task (what the same transaction committed with sendOffsets). A
 * restore learns from it where the task's inputs continue, whatever the group's offsets say.
 */
export const INPUT_POSITIONS_HEADER = 'sr-inputs';

/** Kafka's topic name characters (legal topics never hold '=' or ','). */
const TOPIC = /^[A-Za-z0-9._-]{1,249}$/;
/** A non-negative int64 in canonical decimal. */
const OFFSET = /^(0|[1-9][0-9]{0,18})$/;
const INT64_MAX = 9223372036854775807n;

/** `topic=offset` pairs joined by ',', topics in name order: e.g. `app-commands=12,app-events=4031`. */
export function encodeInputPositions(positions: ReadonlyMap<string, bigint>): string {
  const pairs: string[] = [];
  for (const topic of [...positions.keys()].sort()) {
    const offset = positions.get(topic)!;
    if (!TOPIC.test(topic)) throw new RangeError(`input position: ${JSON.stringify(topic)} is not a Kafka topic name`);
    if (offset < 0n || offset > INT64_MAX) throw new RangeError(`input position of ${topic}: not an int64 offset`);
    pairs.push(`${topic}=${offset.toString()}`);
  }
  return pairs.join(',');
}

/**
 * The positions a header names; empty when it is absent or not in this format (a record of an
 * older release, or garbage): such a record teaches nothing, it never fails a restore. Several
 * values of the header merge by the highest offset per topic.
 */
export function decodeInputPositions(value: HeaderValue | undefined): Map<string, bigint> {
  const positions = new Map<string, bigint>();
  for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
    for (const [topic, offset] of decodeOne(one)) {
      if (offset > (positions.get(topic) ?? -1n)) positions.set(topic, offset);
    }
  }
  return positions;
}

function decodeOne(value: string | Buffer): Map<string, bigint> {
  const text = typeof value === 'string' ? value : value.toString('latin1');
  const positions = new Map<string, bigint>();
  if (text.length === 0 || text.length > 8192) return positions;
  for (const pair of text.split(',')) {
    const eq = pair.indexOf('=');
    const topic = pair.slice(0, eq);
    const offset = pair.slice(eq + 1);
    if (eq < 0 || !TOPIC.test(topic) || !OFFSET.test(offset) || positions.has(topic)) return new Map();
    const n = BigInt(offset);
    if (n > INT64_MAX) return new Map();
    positions.set(topic, n);
  }
  return positions;
}
