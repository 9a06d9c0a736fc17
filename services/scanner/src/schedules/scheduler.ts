import { planRuns, resolveTemplate } from '@state-relay/schedule';
import type { Logger } from 'pino';
import { InvalidRequestError, ScanNotFoundError, TooManyScansError } from '../errors';
import { FINISHED_STATUSES } from '../scans/scan';
import type { ScanService } from '../scans/scan-service';
import { scheduleOf } from './schedule-service';
import type { ScheduleRecord, ScheduleStore } from './schedule-store';

export interface SchedulerDeps {
  store: Pick<ScheduleStore, 'list' | 'runs' | 'recordPlan' | 'startRun'>;
  /**
   * The same service POST /scans uses: a scheduled run is an ordinary scan. Its `create` must write
   * through the schedule store's connection, so the scan joins the run's transaction (startRun).
   */
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
    // s.template is this tick's own parse from SQLite: keep its objects and take only the run's asOf
    // (resolveTemplate's copies fail the rules' plain-object check in a jest vm; see DECISIONS.md).
    const { asOf } = resolveTemplate(s.template, now);
    try {
      // The scan and the occurrence (its run link and lastRunAt) in one SQLite transaction: a crash
      // can leave both or neither, never a scan whose occurrence a restart would start again.
      const run = this.deps.store.startRun(s.id, now, () => {
        const scan = this.deps.scans.create({ ...s.template, asOf });
        return { scheduleId: s.id, scanId: scan.id, dueAt: plan.dueAt!, startedAt: now, missed: plan.missed };
      });
      this.log.info(
        { scheduleId: s.id, scanId: run.scanId, lateMs: now - plan.dueAt!, missed: plan.missed },
        'scheduled run started',
      );
    } catch (err) {
      // Anything else (the database refused the write, the scan queue is full) recorded nothing:
      // the next tick tries this occurrence again, and it still starts once.
      if (err instanceof TooManyScansError) {
        this.log.warn({ scheduleId: s.id }, 'scheduled run waits: the scan queue is full (MAX_ACTIVE_SCANS)');
        return;
      }
      if (!(err instanceof InvalidRequestError)) throw err;
      // The rules now reject the template: this due time is spent, so it is not retried every second.
      this.log.error({ err, scheduleId: s.id }, 'scheduled run could not create its scan: the template is rejected');
      this.deps.store.recordPlan(s.id, now);
    }
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
