// The public surface of @state-relay/schedule: when scheduled sweeps run, as pure functions of an injected clock.
export type { CronFields, CronSchedule, IntervalSchedule, ParseScheduleOptions, Schedule, ScheduleSpec } from './types';
export {
  ScheduleError,
  ScheduleErrorCode,
  ScheduleValidationError,
  ScheduleArgumentError,
  type ScheduleIssue,
} from './errors';
export { parseSchedule } from './parse';
export { nextRun, countRuns } from './next-run';
export { planRuns, type PlanRunsInput, type RunPlan } from './plan-runs';
export { resolveTemplate, type ScanTemplate, type ResolvedScan } from './template';
