import { planRuns, resolveTemplate } from '@state-relay/schedule';
import type { Logger } from 'pino';
import { ScanNotFoundError } from './errors';
import { FINISHED_STATUSES } from './scan';
import type { ScanService } from './scan-service';
import { scheduleOf } from './schedule-service';
import type { ScheduleRecord, ScheduleRun, ScheduleStore } from './schedule-store';

export interface SchedulerDeps {
  store: Pick<ScheduleStore, 'list' | 'runs' | 'recordPlan'>;
  /** The same service POST /scans uses: a scheduled run is an ordinary scan. */
  scans: Pick<ScanService, 'create' | 'get'>;
  logger: Logger;
  now?: () => number;
  tickMs?: number;
}

/**
 * Starts the scans schedules call for. Every tick (and at start) it plans each active schedule
 * with planRuns: whatever came due since its last run, a tick or days of downtime, starts at
 * most one scan; nothing starts while the schedule's previous scan is pending or running.
 */
export class Scheduler {
  private timer?: NodeJS.Timeout;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(private readonly deps: SchedulerDeps) {
    this.now = deps.now ?? Date.now;
    this.log = deps.logger.child({ component: 'scheduler' });
  }

  start(): void {
    if (this.timer) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), this.deps.tickMs ?? 1_000);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass over the schedules at the clock's now. Synchronous, so two ticks never interleave. */
  tick(): void {
    const now = this.now();
    for (const schedule of this.deps.store.list()) {
      if (schedule.paused) continue;
      try {
        this.plan(schedule, now);
      } catch (err) {
        this.log.error({ err, scheduleId: schedule.id }, 'could not plan the schedule');
      }
    }
  }

  private plan(s: ScheduleRecord, now: number): void {
    const last = this.deps.store.runs(s.id, 1)[0];
    const running = last !== undefined && this.unfinished(last.scanId);
    const plan = planRuns({
      schedule: scheduleOf(s),
      anchor: s.createdAt,
      lastRunAt: s.lastRunAt ?? undefined,
      now,
      running,
    });
    if (plan.due === 0) return;
    if (!plan.runNow) {
      this.log.warn(
        { scheduleId: s.id, skipped: plan.missed, runningScanId: last?.scanId },
        'scheduled run skipped: the previous run has not finished',
      );
      this.deps.store.recordPlan(s.id, now);
      return;
    }
    let run: ScheduleRun | undefined;
    try {
      // s.template was parsed from SQLite for this tick, so it is already a private copy: keep its
      // objects, take the run's asOf. (resolveTemplate's structuredClone copies come from Node's own
      // realm, which the rules' plain-object check rejects when the scanner runs in a jest vm.)
      const { asOf } = resolveTemplate(s.template, now);
      const scan = this.deps.scans.create({ ...s.template, asOf });
      run = { scheduleId: s.id, scanId: scan.id, dueAt: plan.dueAt!, startedAt: now, missed: plan.missed };
      this.log.info(
        { scheduleId: s.id, scanId: scan.id, lateMs: now - plan.dueAt!, missed: plan.missed },
        'scheduled run started',
      );
    } catch (err) {
      // lastRunAt still moves on: a template the rules now reject is not retried every second.
      this.log.error({ err, scheduleId: s.id }, 'scheduled run could not create its scan');
    }
    this.deps.store.recordPlan(s.id, now, run);
  }

  private unfinished(scanId: string): boolean {
    try {
      return !FINISHED_STATUSES.includes(this.deps.scans.get(scanId).status);
    } catch (err) {
      if (err instanceof ScanNotFoundError) return false;
      throw err;
    }
  }
}
