// Test helper (not a test): the largest condition of each shape the validator accepts, found by
// searching the limits rather than assuming them, so a test over these stays at the edge if the
// limits change. Used by the rules' SQL tests and the scanner's end-to-end scan test.
import { RULE_LIMITS, validateCondition } from '../src';

/** An `in` of two values (three nodes). */
const inPair = (i: number) => ({ field: `f${i % 10}`, op: 'in', value: [`v${i % 100}`, i] });

/** Ten fields every record of `recordsFor` has; leaves cycle through them and several operators. */
export function leaf(i: number): Record<string, unknown> {
  const field = `f${i % 10}`;
  switch (i % 7) {
    case 0:
      return { field, op: 'eq', value: `v${i}` };
    case 1:
      return { field, op: 'lt', value: i };
    case 2:
      return { field, op: 'prefix', value: `v${i % 100}` };
    case 3:
      return { field, op: 'ne', value: i };
    case 4:
      return { field, op: 'gte', value: { $ago: 'P30D' } };
    case 5:
      return { field, op: 'lte', value: `v${i % 100}` };
    default:
      return { field, op: 'exists' };
  }
}

const leaves = (n: number, from = 0) => Array.from({ length: n }, (_, i) => leaf(from + i));

/** The largest n for which make(n) is accepted; make(n + 1) is refused (checked). */
function largest(make: (n: number) => unknown): { n: number; condition: unknown } {
  let lo = 1;
  let hi = RULE_LIMITS.maxNodes + 1;
  if (validateCondition(make(lo)).length > 0) throw new Error('the smallest condition of this shape is refused');
  while (lo + 1 < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (validateCondition(make(mid)).length === 0) lo = mid;
    else hi = mid;
  }
  if (validateCondition(make(lo + 1)).length === 0) throw new Error('not the largest: one more is accepted');
  return { n: lo, condition: make(lo) };
}

/** `not` around `inner`, `levels` times. */
function nots(levels: number, inner: unknown): unknown {
  let c = inner;
  for (let i = 0; i < levels; i++) c = { not: c };
  return c;
}

/** all/any alternating, each level a leaf and the next level, `levels` deep, the last one an any of `rest` leaves. */
function chain(levels: number, rest: number): unknown {
  let c: unknown = { any: leaves(rest, 5_000) };
  for (let level = levels - 1; level >= 1; level--) c = { [level % 2 ? 'all' : 'any']: [leaf(level), c] };
  return c;
}

/** Each shape at the limit: its name, how large it got, and the condition. */
export function largestConditions(): Array<{ shape: string; n: number; condition: unknown }> {
  const depth = RULE_LIMITS.maxDepth;
  const shapes: Array<[string, (n: number) => unknown]> = [
    ['any of n leaves', (n) => ({ any: leaves(n) })],
    ['all of n leaves', (n) => ({ all: leaves(n) })],
    ['not of an any of n leaves', (n) => ({ not: { any: leaves(n) } })],
    ['in with n values', (n) => ({ field: 'f0', op: 'in', value: Array.from({ length: n }, (_, i) => `v${i}`) })],
    ['any of n in-pairs', (n) => ({ any: Array.from({ length: n }, (_, i) => inPair(i)) })],
    [
      'any of n all-pairs',
      (n) => ({ any: Array.from({ length: n }, (_, i) => ({ all: [leaf(2 * i), leaf(2 * i + 1)] })) }),
    ],
    ['not nested n deep', (n) => nots(n - 1, leaf(1))],
    [`all/any alternating ${depth} deep, the deepest an any of n leaves`, (n) => chain(depth - 1, n)],
    [`not nested ${depth - 1} deep over an any of n leaves`, (n) => nots(depth - 2, { any: leaves(n) })],
  ];
  return shapes.map(([shape, make]) => ({ shape, ...largest(make) }));
}

/** Records that some leaves of every shape accept and others refuse. */
export function recordsFor(count: number, asOf: number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, r) => {
    const record: Record<string, unknown> = {};
    for (let f = 0; f < 10; f++) {
      const i = r * 10 + f;
      if (r % 5 === f % 5) continue; // some fields missing
      record[`f${f}`] = r % 2 === 0 ? `v${i % 100}` : i % 3 === 0 ? asOf - i * 3_600_000 : i;
    }
    return record;
  });
}
