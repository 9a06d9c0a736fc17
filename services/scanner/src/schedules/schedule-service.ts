import { randomUUID } from 'node:crypto';
import { validateAction, validateCondition } from '@state-relay/rules';
import { parseSchedule, planRuns, ScheduleValidationError, type Schedule } from '@state-relay/schedule';
import {
  InvalidRequestError,
  ScanNotFoundError,
  ScheduleNotFoundError,
  TooManySchedulesError,
  type FieldIssue,
} from '../errors';
import type { ScanStatus } from '../scans/scan';
import { commandFitIssues, optionIssues } from '../scans/scan-plan';
import type { ScanService } from '../scans/scan-service';
import type { ScheduleRecord, ScheduleStore, ScheduleTemplate } from './schedule-store';
import type { ScanView } from '../scans/scan-view';

/** A create-schedule body after schema validation: shapes are checked, the schedule and rules are not yet. */
export interface ScheduleRequest {
  name: string;
  interval?: string;
  cron?: string;
  timeZone?: string;
  template: ScheduleTemplate;
}

export interface SchedulePatch {
  paused?: boolean;
  name?: string;
}

export interface ScheduleRunView {
  scanId: string;
  dueAt: string;
  startedAt: string;
  /** Due times folded into this run (it stands for the latest of them). */
  missed: number;
  status: ScanStatus;
  counts: ScanView['counts'];
}

/** A schedule as the API shows it. */
export interface ScheduleView {
  id: string;
  url: string;
  name: string;
  interval?: string;
  cron?: string;
  timeZone: string;
  paused: boolean;
  template: ScheduleTemplate;
  createdAt: string;
  lastRunAt: string | null;
  /** The next run; null while paused. */
  nextRunAt: string | null;
  /** Newest first. */
  lastRuns: ScheduleRunView[];
}

/** What the /schedules routes need. */
export interface ScheduleService {
  /** Throws InvalidRequestError naming the offending fields, or TooManySchedulesError. */
  create(request: ScheduleRequest): ScheduleView;
  list(): ScheduleView[];
  /** Throws ScheduleNotFoundError. */
  get(id: string): ScheduleView;
  update(id: string, patch: SchedulePatch): ScheduleView;
  delete(id: string): void;
}

export interface StoreScheduleServiceDeps {
  store: ScheduleStore;
  scans: Pick<ScanService, 'get'>;
  knownDomainActions: string[];
  /** The shortest interval accepted (SCHEDULE_MIN_INTERVAL_MS). */
  minIntervalMs: number;
  /** Schedules at most (MAX_SCHEDULES); unlimited when absent. */
  maxSchedules?: number;
  now?: () => number;
  newId?: () => string;
}

const LAST_RUNS = 10;

export class StoreScheduleService implements ScheduleService {
  private readonly now: () => number;

  constructor(private readonly deps: StoreScheduleServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  create(request: ScheduleRequest): ScheduleView {
    const { condition, action, options } = request.template;
    const issues: FieldIssue[] = [
      ...nameIssues(request.name),
      ...validateCondition(condition, '/body/template/condition'),
      ...validateAction(action, '/body/template/action', this.deps.knownDomainActions),
      ...optionIssues(options, '/body/template'),
    ];
    if (issues.length === 0) issues.push(...commandFitIssues(condition, action, options ?? {}, '/body/template'));
    const spec = { interval: request.interval, cron: request.cron, timeZone: request.timeZone };
    try {
      parseSchedule(spec, { minIntervalMs: this.deps.minIntervalMs });
    } catch (err) {
      if (!(err instanceof ScheduleValidationError)) throw err;
      issues.push(...err.issues.map((i) => ({ path: `/body${i.path}`, message: i.message })));
    }
    if (issues.length > 0) throw new InvalidRequestError(issues);
    const { maxSchedules = Infinity } = this.deps;
    if (this.deps.store.list().length >= maxSchedules) throw new TooManySchedulesError(maxSchedules);
    const record = this.deps.store.create({
      id: (this.deps.newId ?? randomUUID)(),
      name: request.name,
      interval: request.interval ?? null,
      cron: request.cron ?? null,
      timeZone: request.timeZone ?? 'UTC',
      template: { condition, action, ...(options === undefined ? {} : { options }) },
      createdAt: this.now(),
    });
    return this.view(record);
  }

  list(): ScheduleView[] {
    return this.deps.store.list().map((s) => this.view(s));
  }

  get(id: string): ScheduleView {
    return this.view(this.record(id));
  }

  update(id: string, patch: SchedulePatch): ScheduleView {
    this.record(id);
    const issues = patch.name === undefined ? [] : nameIssues(patch.name);
    if (issues.length > 0) throw new InvalidRequestError(issues);
    if (patch.name !== undefined) this.deps.store.rename(id, patch.name);
    if (patch.paused !== undefined) this.deps.store.setPaused(id, patch.paused, this.now());
    return this.get(id);
  }

  delete(id: string): void {
    if (!this.deps.store.delete(id)) throw new ScheduleNotFoundError(id);
  }

  private record(id: string): ScheduleRecord {
    const s = this.deps.store.get(id);
    if (s === undefined) throw new ScheduleNotFoundError(id);
    return s;
  }

  private view(s: ScheduleRecord): ScheduleView {
    const now = this.now();
    const lastRuns: ScheduleRunView[] = [];
    for (const run of this.deps.store.runs(s.id, LAST_RUNS)) {
      const scan = this.scan(run.scanId);
      if (scan === undefined) continue;
      lastRuns.push({
        scanId: run.scanId,
        dueAt: iso(run.dueAt),
        startedAt: iso(run.startedAt),
        missed: run.missed,
        status: scan.status,
        counts: scan.counts,
      });
    }
    let nextRunAt: string | null = null;
    if (!s.paused) {
      const plan = planRuns({
        schedule: scheduleOf(s),
        anchor: s.createdAt,
        lastRunAt: s.lastRunAt ?? undefined,
        now,
        running: false,
      });
      // A run due but not yet started starts at the next tick, within a second.
      nextRunAt = iso(plan.due > 0 ? now : plan.nextRunAt);
    }
    return {
      id: s.id,
      url: `/schedules/${s.id}`,
      name: s.name,
      ...(s.interval === null ? {} : { interval: s.interval }),
      ...(s.cron === null ? {} : { cron: s.cron }),
      timeZone: s.timeZone,
      paused: s.paused,
      template: s.template,
      createdAt: iso(s.createdAt),
      lastRunAt: s.lastRunAt === null ? null : iso(s.lastRunAt),
      nextRunAt,
      lastRuns,
    };
  }

  private scan(id: string): ScanView | undefined {
    try {
      return this.deps.scans.get(id);
    } catch (err) {
      if (err instanceof ScanNotFoundError) return undefined;
      throw err;
    }
  }
}

/**
 * A stored schedule as the schedule package's plain data. It was validated when created; the
 * floor is 1 ms here so a schedule created under a lower SCHEDULE_MIN_INTERVAL_MS still runs.
 */
export function scheduleOf(s: ScheduleRecord): Schedule {
  return parseSchedule(
    {
      ...(s.interval === null ? {} : { interval: s.interval }),
      ...(s.cron === null ? {} : { cron: s.cron }),
      timeZone: s.timeZone,
    },
    { minIntervalMs: 1 },
  );
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Control characters (C0, DEL, C1) and the bidirectional overrides: a name holding
 * `\u001b[1A\u001b[2K` hid its row from another operator's `schedules list` (issue 34 item 7).
 */
export const NAME_FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** A schedule's name is shown on terminals: it must not hold a character that controls one. */
function nameIssues(name: string): FieldIssue[] {
  const found = NAME_FORBIDDEN.exec(name);
  if (found === null) return [];
  const code = `U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return [
    {
      path: '/body/name',
      message: `must not contain control or bidirectional-override characters (found ${code} at index ${found.index})`,
    },
  ];
}
