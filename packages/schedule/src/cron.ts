import { ScheduleError, ScheduleErrorCode, type ScheduleIssue } from './errors';
import type { CronFields } from './types';

const ALIASES: Record<string, string> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
};

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[]; // names[i] stands for min + i
}

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES },
  { name: 'day-of-week', min: 0, max: 7, names: DAY_NAMES }, // 7 is Sunday too
];
// The longest each month can be (February: 29, in leap years).
const MONTH_MAX_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** One field's problem, caught in parseCron and reported as an issue of the spec. */
class FieldProblem extends ScheduleError {
  constructor(message: string) {
    super(ScheduleErrorCode.INVALID, message);
  }
}

/** The fields of a cron expression (5 fields, or an @alias), or the issue that makes it unusable. */
export function parseCron(
  cron: string,
): { fields: CronFields; issue?: undefined } | { fields?: undefined; issue: ScheduleIssue } {
  const fail = (message: string) => ({ issue: { path: '/cron', message } });
  const trimmed = cron.trim();
  let expression = trimmed;
  if (trimmed.startsWith('@')) {
    const alias = ALIASES[trimmed.toLowerCase()];
    if (alias === undefined) {
      return fail(`unknown alias ${JSON.stringify(trimmed)}; use one of ${Object.keys(ALIASES).join(', ')}`);
    }
    expression = alias;
  }
  const texts = expression.split(/\s+/).filter((t) => t !== '');
  if (texts.length !== 5) {
    return fail(`expected 5 fields (minute hour day-of-month month day-of-week) or an @alias, got ${texts.length}`);
  }
  const values: number[][] = [];
  for (const [i, spec] of FIELDS.entries()) {
    try {
      values.push(expandField(texts[i] as string, spec));
    } catch (e) {
      if (!(e instanceof FieldProblem)) throw e;
      return fail(`field ${i + 1} (${spec.name}) ${e.message}`);
    }
  }
  const [minutes, hours, daysOfMonth, months, rawDaysOfWeek] = values as [
    number[],
    number[],
    number[],
    number[],
    number[],
  ];
  const fields: CronFields = {
    minutes,
    hours,
    daysOfMonth,
    months,
    daysOfWeek: [...new Set(rawDaysOfWeek.map((d) => d % 7))].sort((a, b) => a - b),
    daysOfMonthRestricted: !(texts[2] as string).startsWith('*'),
    daysOfWeekRestricted: !(texts[4] as string).startsWith('*'),
  };
  const never = neverRuns(fields);
  return never === undefined ? { fields } : fail(never);
}

/** A day-of-month that no selected month has (`0 0 30 2 *`) would never run; say so instead. */
function neverRuns(f: CronFields): string | undefined {
  if (!f.daysOfMonthRestricted || f.daysOfWeekRestricted) return undefined;
  const first = f.daysOfMonth[0] as number;
  if (f.months.some((m) => first <= (MONTH_MAX_DAYS[m - 1] as number))) return undefined;
  return `never runs: day-of-month ${f.daysOfMonth.join(',')} does not occur in month ${f.months.join(',')}`;
}

function expandField(text: string, spec: FieldSpec): number[] {
  const out = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') throw new FieldProblem(`${JSON.stringify(text)} has an empty list item`);
    const [range, stepText, extra] = item.split('/');
    if (extra !== undefined) throw new FieldProblem(`${JSON.stringify(item)} has more than one "/"`);
    const step = stepText === undefined ? 1 : readStep(stepText, spec);
    let lo: number;
    let hi: number;
    if (range === '*') {
      [lo, hi] = [spec.min, spec.max];
    } else {
      const [a, b, more] = (range as string).split('-');
      if (more !== undefined) throw new FieldProblem(`${JSON.stringify(item)} is not a value, range or step`);
      lo = readValue(a as string, spec);
      // "a/n" means from a to the field's end, as in most crons.
      hi = b !== undefined ? readValue(b, spec) : stepText !== undefined ? spec.max : lo;
      if (hi < lo) throw new FieldProblem(`range ${JSON.stringify(range)} is reversed (${lo}-${hi})`);
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return [...out].sort((a, b) => a - b);
}

function readStep(text: string, spec: FieldSpec): number {
  if (!/^\d+$/.test(text)) throw new FieldProblem(`step ${JSON.stringify(text)} is not a whole number`);
  const step = Number(text);
  if (step < 1 || step > spec.max - spec.min + 1) {
    throw new FieldProblem(`step ${step} out of range 1-${spec.max - spec.min + 1}`);
  }
  return step;
}

function readValue(text: string, spec: FieldSpec): number {
  if (/^\d+$/.test(text)) {
    const v = Number(text);
    if (v < spec.min || v > spec.max) throw new FieldProblem(`value ${v} out of range ${spec.min}-${spec.max}`);
    return v;
  }
  const index = spec.names?.indexOf(text.toUpperCase()) ?? -1;
  if (index >= 0) return spec.min + index;
  if (/^[A-Za-z]+$/.test(text) && spec.names !== undefined) {
    throw new FieldProblem(`unknown name ${JSON.stringify(text)}; use ${spec.names.join(' ')}`);
  }
  throw new FieldProblem(`${JSON.stringify(text)} is not a number${spec.names ? ' or a name' : ''}`);
}
