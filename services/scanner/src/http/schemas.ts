// The HTTP API's schemas: TypeBox gives the JSON schema (validation, serialization, OpenAPI)
// and the TypeScript type from one source.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import { ActionSchema, ConditionSchema } from '@state-relay/rules';
import { documentedAs, ErrorBodySchema as ErrorBody, literals, Nullable } from '@state-relay/service-kit';
import { PACE_LIMITERS } from '../scans/command-pacer';
import { LATENCY_BUDGET_RANGES } from '../scans/latency-budget';
import { SCAN_PHASES, SCAN_STATUSES } from '../scans/scan';
import { AS_OF_RANGE } from '../scans/scan-plan';

/**
 * A condition or an action in a body. The route's schema takes any object here and the rules'
 * validators judge it (planScan, the schedule service), so a bad rule gets their issues with
 * precise paths; the OpenAPI document shows the rule language's schema (Condition, Action).
 */
const ruleField = (language: TSchema, description: string) =>
  documentedAs(
    Type.Unsafe<unknown>({ type: 'object', additionalProperties: true, description }),
    Type.Unsafe<unknown>({ description, allOf: [language] }),
  );
export const ConditionField = (description: string) => ruleField(ConditionSchema, description);
export const ActionField = (description: string) => ruleField(ActionSchema, description);

/** The documented range of every number a request may carry (README "Number ranges"). */
export const NUMBER_RANGES = {
  /** Below it a command would wait hours for its token; 0 (unlimited) is its own value. */
  rate: { minimum: 0.001, maximum: 1_000_000 },
  batchSize: { minimum: 1, maximum: 100_000 },
  latencyBudgetP99Ms: LATENCY_BUDGET_RANGES.p99Ms,
  latencyBudgetRatio: LATENCY_BUDGET_RANGES.ratio,
  maxCommands: { minimum: 1, maximum: 1_000_000_000 },
  /** Epoch ms of 1970-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, as the ISO form allows. */
  asOf: { minimum: AS_OF_RANGE.min, maximum: AS_OF_RANGE.max },
  limit: { minimum: 1, maximum: 100 },
  offset: { minimum: 0, maximum: 1_000_000_000 },
} as const;

export const ScanOptionsSchema = Type.Object(
  {
    rate: Type.Optional(
      Type.Union(
        [
          Type.Literal(0, { description: 'Unlimited' }),
          Type.Number({ ...NUMBER_RANGES.rate, description: 'Commands per second' }),
        ],
        { description: 'Commands per second; 0 or absent = unlimited' },
      ),
    ),
    batchSize: Type.Optional(
      Type.Integer({ ...NUMBER_RANGES.batchSize, description: 'Replica keys walked per chunk (default CHUNK_SIZE)' }),
    ),
    dryRun: Type.Optional(Type.Boolean({ description: 'Walk and count matches; emit nothing' })),
    maxCommands: Type.Optional(
      Type.Integer({ ...NUMBER_RANGES.maxCommands, description: 'Stop emitting after this many commands' }),
    ),
    expectVersion: Type.Optional(
      Type.Boolean({ description: 'Apply each command only if the entity is still at the version the replica saw' }),
    ),
    latencyBudget: Type.Optional(
      Type.Object(
        {
          p99Ms: Type.Optional(
            Type.Number({ ...NUMBER_RANGES.latencyBudgetP99Ms, description: 'The event commit p99 in milliseconds' }),
          ),
          ratio: Type.Optional(
            Type.Number({
              ...NUMBER_RANGES.latencyBudgetRatio,
              description: 'The event commit p99 as a multiple of its value before the scan started',
            }),
          ),
          off: Type.Optional(
            Type.Literal(true, { description: 'No budget: only the rate cap and the command-lag pause' }),
          ),
        },
        {
          additionalProperties: false,
          description:
            'The event commit p99 the sweep may reach; the walk’s rate is paced to hold it (exactly one of ' +
            'p99Ms, ratio, off). Default: SCAN_LATENCY_BUDGET (1.2x)',
        },
      ),
    ),
    maxDuration: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'How long the scan may run, from its start (walk and results), before it ends failed: an ISO-8601 ' +
          'duration from PT1S to P366D (PT6H). Default: SCAN_MAX_DURATION_MS (24 h)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreateScanBody = Type.Object(
  {
    condition: ConditionField('A condition of the rule language (see the rules package README)'),
    action: ActionField('An action: {set, unset, increment}, {delete: true} or {domain, params}'),
    options: Type.Optional(ScanOptionsSchema),
    asOf: Type.Optional(
      Type.Union([Type.String({ maxLength: 64 }), Type.Integer(NUMBER_RANGES.asOf)], {
        description:
          'The instant relative times resolve against: ISO-8601 with a zone, or epoch ms; ' +
          'years 1970 to 9999. Default: now',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateScanBody = Static<typeof CreateScanBody>;

export const Counts = Type.Object({
  scanned: Type.Integer(),
  matched: Type.Integer(),
  emitted: Type.Integer(),
  pending: Type.Integer({ description: 'Emitted commands without a result yet' }),
  results: Type.Object(Object.fromEntries(COMMAND_OUTCOMES.map((o) => [o, Type.Integer()]))),
});

const PartitionLag = Type.Object({ partition: Type.Integer(), lag: Type.Integer() });
const ReplicaLag = Type.Object({ total: Type.Integer(), partitions: Type.Array(PartitionLag) });

export const ScanViewSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  status: literals(SCAN_STATUSES),
  phase: Nullable(literals(SCAN_PHASES)),
  condition: ConditionField('The condition'),
  action: ActionField('The action'),
  options: ScanOptionsSchema,
  asOf: Type.String({ description: 'ISO-8601' }),
  counts: Counts,
  progress: Type.Object({
    replicaRows: Nullable(Type.Integer()),
    fraction: Nullable(Type.Number()),
    etaSeconds: Nullable(Type.Number()),
    eta: Nullable(Type.String()),
  }),
  pace: Nullable(
    Type.Object(
      {
        rate: Type.Number({ description: 'Commands per second the pacer allows now' }),
        limiter: literals(PACE_LIMITERS),
        budgetP99Ms: Nullable(Type.Number({ description: 'The event p99 the walk holds to, ms' })),
        baselineP99Ms: Nullable(Type.Number({ description: 'The event p99 before the walk started, ms' })),
        eventP99Ms: Nullable(Type.Number({ description: 'The last event p99 read from the processors, ms' })),
      },
      {
        description:
          'While the scan walks and emits: its current command rate and what limits it (ramp: starting up; ' +
          'budget: the events’ p99 reached the budget; lag: the processor fell behind on commands; cap: the ' +
          'scan’s rate). Null otherwise',
      },
    ),
  ),
  backoffSeconds: Type.Number(),
  replicaLag: ReplicaLag,
  createdAt: Type.String(),
  startedAt: Nullable(Type.String()),
  finishedAt: Nullable(Type.String()),
  error: Nullable(Type.String()),
});

export const CreatedScan = Type.Object({ scan: ScanViewSchema, url: Type.String() });

export const ScanList = Type.Object({
  scans: Type.Array(ScanViewSchema),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ ...NUMBER_RANGES.limit, default: 20 })),
    offset: Type.Optional(Type.Integer({ ...NUMBER_RANGES.offset, default: 0 })),
  },
  { additionalProperties: false },
);

export const ScanParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** The error body of every route (the service kit's). */
export { ErrorBody };

export const Readiness = Type.Object({ ready: Type.Boolean(), replicaLag: ReplicaLag });

/** Error responses each guarded route can give. */
export const guardedErrors = { 400: ErrorBody, 401: ErrorBody, 500: ErrorBody } as const;
