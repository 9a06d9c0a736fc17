import { parseDurationMs } from './duration';
import { hasOwn, isJsonObject, ownValue } from './json';
import type { EvalContext, JsonValue, Operand, RelativeTime } from './types';

/** An operand object with a "$ago" key is a relative time; every other value is literal JSON. */
export function isRelativeTime(v: unknown): v is RelativeTime {
  return isJsonObject(v) && hasOwn(v, '$ago');
}

/** The JSON value an operand stands for: `{ "$ago": "P30D" }` becomes `ctx.asOf` minus 30 days, in epoch ms. */
export function resolveOperand(op: Operand, ctx: EvalContext): JsonValue {
  if (!isRelativeTime(op)) return op as JsonValue;
  return ctx.asOf - parseDurationMs(ownValue(op, '$ago') as string);
}
