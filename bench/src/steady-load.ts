import type { KeyedEvent } from './lib';

const DAY = 24 * 60 * 60 * 1000;

/** The steady event load: a deterministic sequence, so the verifier can fold exactly what was sent. */
export interface SteadyLoadSpec {
  seed: number;
  /** Keys acct-000000 .. acct-<keys-1>, as generateAccountEvents names them. */
  keys: number;
  /** The sweep's asOf: every load event is at most 20 days before it, so it never makes an account dormant-eligible. */
  asOf: number;
}

/** Event i of the sequence: an `activity` (80 %) or a `payment` for a random existing key. */
export function steadyEvent(spec: SteadyLoadSpec, i: number): KeyedEvent {
  const width = Math.max(6, String(Math.max(spec.keys - 1, 0)).length);
  const key = `acct-${String(Math.floor(unit(spec.seed, i, 0) * spec.keys)).padStart(width, '0')}`;
  const at = spec.asOf - Math.floor(unit(spec.seed, i, 1) * 20 * DAY);
  if (unit(spec.seed, i, 2) < 0.8) return { key, event: { type: 'activity', at, data: {} } };
  const amount = Math.floor(unit(spec.seed, i, 3) * 20_000) - 5_000;
  return { key, event: { type: 'payment', at, data: { amount } } };
}

/** A uniform number in [0, 1) from (seed, index, lane): random access, no state to carry. */
function unit(seed: number, i: number, lane: number): number {
  let x = (seed ^ Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(lane + 1, 0x85ebca77)) >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return (x >>> 0) / 2 ** 32;
}
