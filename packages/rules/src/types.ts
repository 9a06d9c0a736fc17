// The condition/action language shared by the scanner (which decides) and the processor
// (which re-checks and applies). Plain JSON, validated by schema, interpreted — never eval'd.

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A time relative to the scan's `asOf` instant: `{ "$ago": "P30D" }` = asOf - 30 days (epoch ms). */
export interface RelativeTime {
  $ago: string;
}
/** An operand: a JSON value, or a relative time resolved against `asOf`. */
export type Operand = JsonValue | RelativeTime;

export type ComparisonOp = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte';

/** Dotted path into the record, e.g. "status" or "limits.daily". */
export type FieldPath = string;

export type Condition =
  | { all: Condition[] }
  | { any: Condition[] }
  | { not: Condition }
  | { field: FieldPath; op: ComparisonOp; value: Operand }
  | { field: FieldPath; op: 'in'; value: JsonPrimitive[] }
  | { field: FieldPath; op: 'exists'; value?: boolean }
  | { field: FieldPath; op: 'prefix'; value: string };

/**
 * An action. `set`, `unset` and `increment` may be combined in one object (applied in that
 * order); `delete` and `domain` stand alone.
 */
export type Action =
  | { set?: Record<FieldPath, JsonValue>; unset?: FieldPath[]; increment?: Record<FieldPath, number> }
  | { delete: true }
  | { domain: string; params?: JsonObject };

/** What evaluating needs besides the record: the scan's instant, resolved once at creation. */
export interface EvalContext {
  asOf: number; // epoch ms
}

/** A named domain action: a pure function of the current value, the params and the context. */
export type DomainAction = (current: JsonObject, params: JsonObject, ctx: EvalContext) => ActionOutcome;

export type ActionOutcome = { kind: 'update'; value: JsonObject } | { kind: 'delete' };

/**
 * One offending field: `path` is a JSON pointer to it, e.g. "/condition/all/1/op" (the services
 * prefix the request part: "/body/condition/all/1/op"). The one issue type of the workspace: the
 * service kit's error bodies and the rules' validators share it.
 */
export interface FieldIssue {
  path: string;
  message: string;
}

/** A rule validator's issue: a FieldIssue. */
export type ValidationIssue = FieldIssue;
