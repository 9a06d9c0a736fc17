import { Type, type Static } from '@sinclair/typebox';

// What the scanner reads of a processor's GET /status (services/processor/src/status/schema.ts)
// and passes on to the status page: a tolerant reader, so fields the processor adds later are
// dropped here rather than refused.

const Count = Type.Integer({ minimum: 0 });
const Counts = Type.Record(Type.String(), Count);
const Ms = Type.Union([Type.Number(), Type.Null()]);

export const ProcessorStatusSchema = Type.Object({
  at: Type.String(),
  instanceId: Type.Union([Type.String(), Type.Null()]),
  ready: Type.Boolean(),
  tasks: Type.Array(Type.Object({ task: Type.Integer(), state: Type.String() })),
  restores: Type.Object({
    inProgress: Type.Array(
      Type.Object({
        task: Type.Integer(),
        restored: Count,
        toGo: Count,
        startedAt: Type.String(),
      }),
    ),
    last: Type.Array(
      Type.Object({
        task: Type.Integer(),
        restored: Count,
        ms: Count,
        finishedAt: Type.String(),
        ok: Type.Boolean(),
      }),
    ),
  }),
  commitLatency: Type.Object({ windowSeconds: Type.Integer(), count: Count, p50Ms: Ms, p99Ms: Ms }),
  /** Events alone over a short window: what a sweep is paced by. Absent from a processor older than it. */
  eventCommitLatency: Type.Optional(Type.Object({ windowSeconds: Type.Integer(), count: Count, p50Ms: Ms, p99Ms: Ms })),
  commands: Counts,
  events: Counts,
  deadLetters: Type.Object({ total: Count, byCode: Counts }),
  consumerLag: Type.Union([
    Type.Array(Type.Object({ topic: Type.String(), partition: Type.Integer(), lag: Count })),
    Type.Null(),
  ]),
});

export type ProcessorStatus = Static<typeof ProcessorStatusSchema>;
