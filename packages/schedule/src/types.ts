/** What a caller gives: exactly one of `interval` (ISO-8601 duration) or `cron`, and a time zone (default UTC). */
export interface ScheduleSpec {
  interval?: string;
  cron?: string;
  timeZone?: string;
}

export interface ParseScheduleOptions {
  /** The shortest interval accepted, in ms. Default 60 000 (one minute); lower it only in tests. */
  minIntervalMs?: number;
}

/** Every `interval` run is `anchor + k × interval` for k ≥ 1: `days` on the wall clock, then `fixedMs` of real time. */
export interface IntervalSchedule {
  readonly kind: 'interval';
  readonly interval: string;
  readonly timeZone: string;
  /** Calendar days (PnD, PnW): the same wall-clock time n days later in `timeZone`. */
  readonly days: number;
  /** Hours, minutes and seconds (PTnH, PTnM, PTnS): elapsed time, whatever the wall clock does. */
  readonly fixedMs: number;
}

/** The expanded fields of a cron expression, each a sorted list of the values it allows. */
export interface CronFields {
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: readonly number[];
  readonly months: readonly number[];
  /** 0 = Sunday … 6 = Saturday (a 7 in the expression is stored as 0). */
  readonly daysOfWeek: readonly number[];
  /** Vixie cron's rule: a day field is restricted unless it starts with `*`; when both are, a day matches either. */
  readonly daysOfMonthRestricted: boolean;
  readonly daysOfWeekRestricted: boolean;
}

export interface CronSchedule {
  readonly kind: 'cron';
  readonly cron: string;
  readonly timeZone: string;
  readonly fields: CronFields;
}

/** A validated schedule: plain data, safe to keep and to share. */
export type Schedule = IntervalSchedule | CronSchedule;
