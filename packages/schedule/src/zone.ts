// Wall clock <-> instant in an IANA time zone, with nothing but Intl. A "wall time" is the local
// date and time written as if it were UTC (Date.UTC(y, m, d, h, min)): civil arithmetic on it
// (add a day, go to the next hour) is plain addition, because UTC has no DST.

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** True when Intl knows the zone (IANA names, case-insensitive, and "UTC"). */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/**
 * The zone's offset from UTC at `instant`, in ms (whole seconds: Intl shows no finer), from a cache
 * of each UTC day's offsets: two Intl calls per day and zone, and a bisection on a day the offset
 * changes. See DECISIONS.md, "Offsets cached per day".
 */
export function offsetAt(instant: number, timeZone: string): number {
  const day = Math.floor(instant / DAY_MS);
  let days = offsetDays.get(timeZone);
  if (days === undefined) {
    days = new Map();
    offsetDays.set(timeZone, days);
  }
  let d = days.get(day);
  if (d === undefined) {
    if (cachedDays >= MAX_CACHED_DAYS) {
      offsetDays.clear();
      offsetDays.set(timeZone, days);
      days.clear();
      cachedDays = 0;
    }
    d = offsetsOfDay(day * DAY_MS, timeZone);
    days.set(day, d);
    cachedDays += 1;
  }
  return instant < d.changeAt ? d.before : d.after;
}

interface DayOffsets {
  before: number;
  /** The first instant with the new offset; Infinity on a day without a change. */
  changeAt: number;
  after: number;
}

const MAX_CACHED_DAYS = 100_000; // ~3 MB; dropped whole when full (a year of one zone is 365)
const offsetDays = new Map<string, Map<number, DayOffsets>>();
let cachedDays = 0;

function offsetsOfDay(start: number, timeZone: string): DayOffsets {
  const before = intlOffsetAt(start, timeZone);
  const after = intlOffsetAt(start + DAY_MS, timeZone);
  if (before === after) return { before, changeAt: Infinity, after };
  return { before, changeAt: firstChange(start, start + DAY_MS, (t) => intlOffsetAt(t, timeZone)), after };
}

/** The offset as Intl computes it, uncached. */
function intlOffsetAt(instant: number, timeZone: string): number {
  const second = Math.floor(instant / 1000) * 1000;
  const p: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(second)) {
    if (part.type !== 'literal') p[part.type] = Number(part.value);
  }
  const wall = Date.UTC(p.year ?? 0, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0, p.second ?? 0);
  return wall - second;
}

/** The wall time a clock in `timeZone` shows at `instant`. */
export function wallTimeAt(instant: number, timeZone: string): number {
  return instant + offsetAt(instant, timeZone);
}

/**
 * The instant a wall time happens in `timeZone`, by this package's DST rules:
 * - a wall time that happens twice (fall back) is its first occurrence;
 * - a wall time that never happens (spring-forward gap) is the first instant after the gap.
 * So later wall times never map to earlier instants. Assumes at most one offset change within a
 * day either side of the wall time (true of every zone in the tz database since 1970).
 */
export function instantAt(wall: number, timeZone: string): number {
  const before = offsetAt(wall - DAY_MS, timeZone);
  const after = offsetAt(wall + DAY_MS, timeZone);
  if (before === after) return wall - before;
  const fits = [wall - before, wall - after].filter((t) => wallTimeAt(t, timeZone) === wall);
  if (fits.length > 0) return Math.min(...fits);
  // In the gap: the transition lies between the instant this wall time would be under either offset.
  return firstChange(wall - Math.max(before, after), wall - Math.min(before, after), (t) => offsetAt(t, timeZone));
}

/** The first instant in (lo, hi] whose offset differs from lo's, by bisection to the millisecond. */
function firstChange(lo: number, hi: number, offset: (instant: number) => number): number {
  const old = offset(lo);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offset(mid) === old) lo = mid;
    else hi = mid;
  }
  return hi;
}
