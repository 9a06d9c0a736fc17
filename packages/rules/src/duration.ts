import { RuleValidationError } from './errors';
import { quote } from './json';
import { RULE_LIMITS } from './limits';

const MS = { W: 604_800_000, D: 86_400_000, H: 3_600_000, M: 60_000, S: 1_000 } as const;
/**
 * ISO-8601 durations of fixed length only: whole weeks, days, hours, minutes, seconds. The one
 * copy: the JSON schema's pattern, the rules' `$ago` and the schedule package's intervals.
 */
export const DURATION_PATTERN = '^(?!P$)(?!.*T$)P(?:\\d+W)?(?:\\d+D)?(?:T(?:\\d+H)?(?:\\d+M)?(?:\\d+S)?)?$';
const DURATION = new RegExp(DURATION_PATTERN);
const EXAMPLES = 'e.g. "P30D", "PT12H", "P1DT12H" (whole weeks W, days D, hours H, minutes M, seconds S)';

/** The whole units of a duration that matches DURATION_PATTERN. */
export interface DurationParts {
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

/**
 * The units of an ISO-8601 duration; 'calendar' when it uses years or months (no fixed length),
 * 'invalid' when it is no duration DURATION_PATTERN accepts.
 */
export function durationParts(s: string): DurationParts | 'calendar' | 'invalid' {
  if (/^P[^T]*[YM]/.test(s)) return 'calendar';
  if (!DURATION.test(s)) return 'invalid';
  const [date = '', time = ''] = s.slice(1).split('T');
  const [, weeks, days] = (/^(?:(\d+)W)?(?:(\d+)D)?$/.exec(date) ?? []).map(Number);
  const [, hours, minutes, seconds] = (/^(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/.exec(time) ?? []).map(Number);
  const n = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? 0 : v);
  return { weeks: n(weeks), days: n(days), hours: n(hours), minutes: n(minutes), seconds: n(seconds) };
}

/** Why `s` is not a supported ISO-8601 duration, or undefined when it is. */
export function durationProblem(s: unknown): string | undefined {
  return typeof s === 'string' ? readDuration(s).problem : `expected an ISO-8601 duration string, ${EXAMPLES}`;
}

/** Durations parsed so far (valid ones): a scan's `$ago` is resolved once per command, parsed once. */
const PARSED = new Map<string, number>();
const PARSED_MAX = 256;

/** Milliseconds in an ISO-8601 duration such as "P30D" or "P1DT12H"; throws RuleValidationError otherwise. */
export function parseDurationMs(s: string): number {
  const known = typeof s === 'string' ? PARSED.get(s) : undefined;
  if (known !== undefined) return known;
  const { ms, problem } =
    typeof s === 'string' ? readDuration(s) : { ms: 0, problem: durationProblem(s) ?? 'not a duration' };
  if (problem !== undefined) throw new RuleValidationError([{ path: '', message: problem }]);
  if (PARSED.size >= PARSED_MAX) PARSED.delete(PARSED.keys().next().value!);
  PARSED.set(s, ms);
  return ms;
}

function readDuration(s: string): { ms: number; problem?: string } {
  const parts = durationParts(s);
  if (parts === 'calendar') {
    const problem = `duration ${quote(s)} uses years or months, which have no fixed length; use weeks or days`;
    return { ms: 0, problem };
  }
  if (parts === 'invalid') {
    return { ms: 0, problem: `invalid duration ${quote(s)}; expected an ISO-8601 duration, ${EXAMPLES}` };
  }
  const { weeks, days, hours, minutes, seconds } = parts;
  const ms = weeks * MS.W + days * MS.D + hours * MS.H + minutes * MS.M + seconds * MS.S;
  if (!Number.isSafeInteger(ms) || ms > RULE_LIMITS.maxDurationDays * MS.D) {
    return { ms: 0, problem: `duration ${quote(s)} is too long: at most ${RULE_LIMITS.maxDurationDays} days` };
  }
  return { ms };
}
