import { parseCron } from './cron';
import { cronRunsTooOften } from './cron-gap';
import { ScheduleArgumentError, ScheduleValidationError, type ScheduleIssue } from './errors';
import { parseInterval } from './interval';
import type { ParseScheduleOptions, Schedule, ScheduleSpec } from './types';
import { isKnownTimeZone } from './zone';

const DEFAULT_MIN_INTERVAL_MS = 60_000;

/**
 * Validates a schedule spec: exactly one of `interval` (ISO-8601 duration) or `cron` (5 fields or
 * an @alias), either with no two runs closer than `minIntervalMs` (default a minute), and an IANA
 * `timeZone` (default "UTC"). Throws ScheduleValidationError listing every problem, each under the
 * field's JSON pointer.
 */
export function parseSchedule(spec: ScheduleSpec, options: ParseScheduleOptions = {}): Schedule {
  const minIntervalMs = options.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS;
  if (!Number.isSafeInteger(minIntervalMs) || minIntervalMs < 1) {
    throw new ScheduleArgumentError(`minIntervalMs must be a whole number of ms, at least 1, got ${minIntervalMs}`);
  }
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new ScheduleValidationError([
      { path: '', message: 'expected an object with interval or cron, and timeZone' },
    ]);
  }
  const issues: ScheduleIssue[] = [];
  const interval = readString(spec, 'interval', issues);
  const cron = readString(spec, 'cron', issues);
  const timeZone = readString(spec, 'timeZone', issues) ?? 'UTC';
  if (!isKnownTimeZone(timeZone)) {
    issues.push({ path: '/timeZone', message: `unknown time zone ${JSON.stringify(timeZone)}` });
  }

  let schedule: Schedule | undefined;
  const given = [spec.interval, spec.cron].filter((v) => v !== undefined).length;
  if (given !== 1) {
    issues.push({
      path: '',
      message: `give exactly one of interval (an ISO-8601 duration) or cron, not ${given === 0 ? 'neither' : 'both'}`,
    });
  } else if (interval !== undefined) {
    const r = parseInterval(interval, minIntervalMs);
    if (r.issue) issues.push(r.issue);
    else schedule = { kind: 'interval', interval, timeZone, ...r.parts };
  } else if (cron !== undefined) {
    const r = parseCron(cron);
    const issue = r.issue ?? cronRunsTooOften(cron, r.fields, minIntervalMs);
    if (issue) issues.push(issue);
    else if (r.fields) schedule = { kind: 'cron', cron, timeZone, fields: r.fields };
  }
  if (issues.length > 0 || schedule === undefined) throw new ScheduleValidationError(issues);
  return schedule;
}

function readString(spec: ScheduleSpec, key: keyof ScheduleSpec, issues: ScheduleIssue[]): string | undefined {
  const v: unknown = spec[key];
  if (v === undefined) return undefined;
  if (typeof v === 'string' && v.trim() !== '') return v;
  const got = v === null ? 'null' : typeof v === 'string' ? 'an empty string' : typeof v;
  issues.push({ path: `/${key}`, message: `expected a non-empty string, got ${got}` });
  return undefined;
}
