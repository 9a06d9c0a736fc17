import { Type, type Static } from '@sinclair/typebox';

const Count = Type.Integer({ minimum: 0 });
const Counts = (description: string) => Type.Record(Type.String(), Count, { description });

const TaskStatus = Type.Object({
  task: Type.Integer({ description: 'The task (partition of both inputs)' }),
  state: Type.String({ description: 'CREATED, RESTORING, RUNNING or FAILED' }),
});

const RestoreInProgress = Type.Object({
  task: Type.Integer(),
  restored: Type.Integer({ description: 'Changelog records applied to the store so far' }),
  toGo: Type.Integer({
    description: 'Changelog offsets between the restore’s position and the end it restores to',
  }),
  startedAt: Type.String(),
});

const RestoreDone = Type.Object({
  task: Type.Integer(),
  restored: Type.Integer(),
  ms: Type.Integer({ description: 'How long the restore took' }),
  finishedAt: Type.String(),
  ok: Type.Boolean({ description: 'false: the restore failed (the task retries)' }),
});

const Latency = Type.Union([Type.Number(), Type.Null()]);

/** GET /status on the processor: what the scanner's status page shows of this instance. */
export const ProcessorStatusSchema = Type.Object({
  at: Type.String(),
  instanceId: Type.Union([Type.String(), Type.Null()], {
    description:
      'INSTANCE_ID, or the id kept in STATE_DIR (EXACTLY_ONCE=v2); null before start or under v1 without INSTANCE_ID',
  }),
  ready: Type.Boolean({ description: 'As GET /readyz' }),
  tasks: Type.Array(TaskStatus, { description: 'The tasks of the current assignment, by task' }),
  restores: Type.Object({
    inProgress: Type.Array(RestoreInProgress),
    last: Type.Array(RestoreDone, { description: 'The last finished restore of each task owned now' }),
  }),
  commitLatency: Type.Object(
    {
      windowSeconds: Type.Integer(),
      count: Count,
      p50Ms: Latency,
      p99Ms: Latency,
    },
    {
      description:
        'Commit latency of both inputs, events and commands (input record timestamp to its transaction’s commit), over the last window',
    },
  ),
  eventCommitLatency: Type.Object(
    {
      windowSeconds: Type.Integer(),
      count: Count,
      p50Ms: Latency,
      p99Ms: Latency,
    },
    {
      description:
        'Commit latency of events alone (not commands) over a short window (3 s): what the scanner paces a sweep by; null percentiles when no event was committed in it',
    },
  ),
  commands: Counts('Commands committed since the process started, by outcome (processor_commands_total)'),
  events: Counts('Events committed since the process started, by outcome (processor_events_total)'),
  deadLetters: Type.Object({
    total: Count,
    byCode: Counts('Dead letters committed since the process started, by dlq.code'),
  }),
  consumerLag: Type.Union(
    [
      Type.Array(Type.Object({ topic: Type.String(), partition: Type.Integer(), lag: Type.Integer({ minimum: 0 }) })),
      Type.Null(),
    ],
    {
      description:
        'Per partition of both inputs this instance owns: end offset minus the group’s committed offset; null when Kafka did not answer within 2 s',
    },
  ),
});

export type ProcessorStatus = Static<typeof ProcessorStatusSchema>;
