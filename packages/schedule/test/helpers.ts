import { nextRun, type Schedule } from '../src';

export const at = (iso: string): number => {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) throw new Error(`bad test time ${iso}`);
  return t;
};
export const iso = (t: number): string => new Date(t).toISOString();

/** The next `n` runs strictly after `from`, as ISO strings (UTC). */
export function runsAfter(schedule: Schedule, from: string | number, n: number, anchor?: number): string[] {
  const out: string[] = [];
  let t = typeof from === 'string' ? at(from) : from;
  for (let i = 0; i < n; i++) {
    t = nextRun(schedule, t, anchor);
    out.push(iso(t));
  }
  return out;
}

/** Wall-clock rendering in a zone, for readable assertions: "2025-03-30 03:00 GMT+2". */
export function local(t: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'shortOffset',
  }).formatToParts(t);
  const p = Object.fromEntries(parts.map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute} ${p.timeZoneName}`;
}
