// The rule language as JSON Schema (TypeBox): what a condition and an action look like, for API
// documents and clients. The validators (validateCondition, validateAction) stay the authority:
// they also bound sizes and depth, refuse overlapping fields and unknown domain actions, and name
// each problem precisely; a value they accept always matches these schemas.
import { Type, type TSchema } from '@sinclair/typebox';
import { RULE_LIMITS } from './limits';
import { DURATION_PATTERN } from './duration';

const SEGMENT = '[A-Za-z_][A-Za-z0-9_]*';
const RESERVED = '(?:__proto__|constructor|prototype)';

/** A dotted field path: up to RULE_LIMITS.maxPathSegments identifiers, none of them reserved. */
export const FieldPathSchema = Type.String({
  pattern: `^(?!(?:.*\\.)?${RESERVED}(?:\\.|$))${SEGMENT}(?:\\.${SEGMENT}){0,${RULE_LIMITS.maxPathSegments - 1}}$`,
  description: `A dotted path into the record, e.g. "status" or "limits.daily" (at most ${RULE_LIMITS.maxPathSegments} segments)`,
});

/** Any JSON value; no object key "__proto__". */
export const JsonValueSchema = Type.Recursive(
  (Self) =>
    Type.Union([
      Type.Null(),
      Type.Boolean(),
      Type.Number(),
      Type.String(),
      Type.Array(Self),
      Type.Record(Type.String({ pattern: '^(?!__proto__$)' }), Self, { additionalProperties: false }),
    ]),
  { $id: 'JsonValue', description: 'Any JSON value' },
);

const JsonPrimitiveSchema = Type.Union([Type.Null(), Type.Boolean(), Type.Number(), Type.String()]);

/** `{"$ago": duration}`: the scan's asOf minus a duration of whole weeks, days, hours, minutes, seconds. */
export const RelativeTimeSchema = Type.Object(
  {
    $ago: Type.String({
      pattern: DURATION_PATTERN,
      description: `An ISO-8601 duration of fixed length: "P30D", "PT12H", "P1DT12H"; at most ${RULE_LIMITS.maxDurationDays} days`,
    }),
  },
  { additionalProperties: false, description: 'A time relative to the scan’s asOf (epoch ms)' },
);

/** An operand of eq and ne: a JSON value, or a relative time (other "$" keys are reserved). */
const OperandSchema = Type.Union([
  RelativeTimeSchema,
  JsonPrimitiveSchema,
  Type.Array(JsonValueSchema),
  Type.Record(Type.String({ pattern: '^(?!__proto__$)[^$]' }), JsonValueSchema, { additionalProperties: false }),
]);

const leaf = <V extends TSchema>(ops: readonly string[], value: V, valueRequired = true) =>
  Type.Object(
    {
      field: FieldPathSchema,
      op: Type.Union(ops.map((op) => Type.Literal(op))),
      value: valueRequired ? value : Type.Optional(value),
    },
    { additionalProperties: false },
  );

/** A condition: comparisons of fields, combined with all, any and not. */
export const ConditionSchema = Type.Recursive(
  (Self) =>
    Type.Union([
      Type.Object({ all: Type.Array(Self, { minItems: 1 }) }, { additionalProperties: false }),
      Type.Object({ any: Type.Array(Self, { minItems: 1 }) }, { additionalProperties: false }),
      Type.Object({ not: Self }, { additionalProperties: false }),
      leaf(['eq', 'ne'], OperandSchema),
      leaf(['lt', 'lte', 'gt', 'gte'], Type.Union([Type.Number(), Type.String(), RelativeTimeSchema])),
      leaf(['in'], Type.Array(JsonPrimitiveSchema, { minItems: 1 })),
      leaf(['exists'], Type.Boolean(), false),
      leaf(['prefix'], Type.String()),
    ]),
  {
    $id: 'Condition',
    description:
      'A condition of the rule language: {all: [...]}, {any: [...]}, {not: ...}, or {field, op, value} ' +
      'with op one of eq, ne, lt, lte, gt, gte, in, exists, prefix',
  },
);

const fieldMap = <V extends TSchema>(value: V) =>
  Type.Record(Type.String({ pattern: FieldPathSchema.pattern }), value, { additionalProperties: false });

/** An action: field changes (set, unset, increment, combinable), {delete: true}, or a named domain action. */
export const ActionSchema = Type.Union(
  [
    Type.Object(
      {
        set: Type.Optional(fieldMap(JsonValueSchema)),
        unset: Type.Optional(Type.Array(FieldPathSchema)),
        increment: Type.Optional(fieldMap(Type.Number())),
      },
      {
        additionalProperties: false,
        minProperties: 1,
        description: 'Set, unset and increment fields (applied in that order); at least one field in all',
      },
    ),
    Type.Object({ delete: Type.Literal(true) }, { additionalProperties: false, description: 'Delete the entity' }),
    Type.Object(
      {
        domain: Type.String({ minLength: 1, description: 'The name of a domain action the processor knows' }),
        params: Type.Optional(
          Type.Record(Type.String({ pattern: '^(?!__proto__$)' }), JsonValueSchema, { additionalProperties: false }),
        ),
      },
      { additionalProperties: false, description: 'A named domain action' },
    ),
  ],
  {
    $id: 'Action',
    description: 'An action: {set, unset, increment}, {delete: true} or {domain, params}',
  },
);
