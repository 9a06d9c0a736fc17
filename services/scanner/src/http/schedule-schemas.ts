// The /schedules schemas (TypeBox: JSON schema and TypeScript type from one source).
import { Type, type Static } from '@sinclair/typebox';
import { SCAN_STATUSES } from '../scans/scan';
import { literals, Nullable } from '@state-relay/service-kit';
import { ActionField, ConditionField, Counts, ScanOptionsSchema } from './schemas';

export const ScheduleTemplateSchema = Type.Object(
  {
    condition: ConditionField(
      'A condition of the rule language; relative times ({"$ago": "P30D"}) resolve at each run',
    ),
    action: ActionField('An action, as for POST /scans'),
    options: Type.Optional(ScanOptionsSchema),
  },
  { additionalProperties: false },
);

export const CreateScheduleBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    interval: Type.Optional(
      Type.String({ maxLength: 64, description: 'An ISO-8601 duration (PT1H, P1D); give this or cron' }),
    ),
    cron: Type.Optional(
      Type.String({ maxLength: 200, description: 'Five-field cron or an @alias; give this or interval' }),
    ),
    timeZone: Type.Optional(Type.String({ maxLength: 64, description: 'IANA time zone; default UTC' })),
    template: ScheduleTemplateSchema,
  },
  { additionalProperties: false },
);
export type CreateScheduleBody = Static<typeof CreateScheduleBody>;

export const PatchScheduleBody = Type.Object(
  {
    paused: Type.Optional(Type.Boolean({ description: 'Pause or resume; resuming does not make up paused runs' })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchScheduleBody = Static<typeof PatchScheduleBody>;

export const ScheduleParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

const ScheduleRunSchema = Type.Object({
  scanId: Type.String(),
  dueAt: Type.String({ description: 'The latest due time this run stands for' }),
  startedAt: Type.String({ description: 'When the scan was created; its asOf' }),
  missed: Type.Integer({ description: 'Due times folded into this run' }),
  status: literals(SCAN_STATUSES),
  counts: Counts,
});

export const ScheduleViewSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  name: Type.String(),
  interval: Type.Optional(Type.String()),
  cron: Type.Optional(Type.String()),
  timeZone: Type.String(),
  paused: Type.Boolean(),
  template: Type.Object({
    condition: ConditionField('The condition'),
    action: ActionField('The action'),
    options: Type.Optional(ScanOptionsSchema),
  }),
  createdAt: Type.String(),
  lastRunAt: Nullable(Type.String()),
  nextRunAt: Nullable(Type.String({ description: 'null while paused' })),
  lastRuns: Type.Array(ScheduleRunSchema, { description: 'Newest first, at most 10' }),
});

export const ScheduleList = Type.Object({ schedules: Type.Array(ScheduleViewSchema) });
