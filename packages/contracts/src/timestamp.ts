// Strict ISO-8601 instants. Date.parse alone is too lenient: it accepts other formats,
// rolls 2020-02-30 over to March, and reads a date-time without offset as local time,
// which would make the same event fold differently on machines in different time zones.
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2}))?$/;

/** Epoch ms for a date (UTC midnight) or a date-time with `Z` or a numeric offset; undefined otherwise. */
export function parseIsoInstant(text: string): number | undefined {
  const m = ISO_INSTANT.exec(text);
  if (!m) return undefined;
  const num = (i: number): number => (m[i] === undefined ? 0 : Number(m[i]));
  const [year, month, day, hour, minute, second] = [num(1), num(2), num(3), num(4), num(5), num(6)];
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const offset = m[8] === undefined || m[8] === 'Z' ? 0 : offsetMinutes(m[8]);
  if (offset === undefined) return undefined;
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1) return undefined; // day past the end of the month
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime() - offset * 60_000;
}

function offsetMinutes(text: string): number | undefined {
  const digits = text.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2));
  if (hours > 23 || minutes > 59) return undefined;
  return (text[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
}
