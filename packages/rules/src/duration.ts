import { RuleValidationError } from './errors';
import { quote } from './json';
import { RULE_LIMITS } from './limits';

const MS = { W: 604_800_000, D: 86_400_000, H: 3_600_000, M: 60_000, S: 1_000 } as const;
// Only units of fixed length: weeks, days, hours, minutes, seconds, as whole numbers.
const DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;
const MAX_MS = RULE_LIMITS.maxDurationDays * MS.D;
const EXAMPLES = 'e.g. "P30D", "PT12H", "P1DT12H" (whole weeks W, days D, hours H, minutes M, seconds S)';

/** Why `s` is not a supported ISO-8601 duration, or undefined when it is. */
export function durationProblem(s: unknown): string | undefined {
  return typeof s === 'string' ? readDuration(s).problem : `expected an ISO-8601 duration string, ${EXAMPLES}`;
}

/** Milliseconds in an ISO-8601 duration such as "P30D" or "P1DT12H"; throws RuleValidationError otherwise. */
export function parseDurationMs(s: string): number {
  const problem = durationProblem(s);
  if (problem !== undefined) throw new RuleValidationError([{ path: '', message: problem }]);
  return readDuration(s).ms;
}

function readDuration(s: string): { ms: number; problem?: string } {
  if (/^P[^T]*[YM]/.test(s)) {
    const problem = `duration ${quote(s)} uses years or months, which have no fixed length; use weeks or days`;
    return { ms: 0, problem };
  }
  const m = DURATION.exec(s);
  if (m === null || s === 'P' || s.endsWith('T')) {
    return { ms: 0, problem: `invalid duration ${quote(s)}; expected an ISO-8601 duration, ${EXAMPLES}` };
  }
  const [, w, d, h, min, sec] = m;
  const ms = n(w) * MS.W + n(d) * MS.D + n(h) * MS.H + n(min) * MS.M + n(sec) * MS.S;
  if (!Number.isSafeInteger(ms) || ms > MAX_MS) {
    return { ms: 0, problem: `duration ${quote(s)} is too long: at most ${RULE_LIMITS.maxDurationDays} days` };
  }
  return { ms };
}

function n(digits: string | undefined): number {
  return digits === undefined ? 0 : Number(digits);
}
