import type { Counter } from 'prom-client';
import type { ProcessorMetrics } from '../metrics';
import type { TaskLifecycle } from '../tasks/lifecycle';
import type { CommitLatencyWindow } from './commit-latency-window';
import { EVENT_LATENCY_WINDOW_SECONDS, type EventCommitLatency } from './event-commit-latency';
import type { InputLag } from './input-lag';
import type { RestoreProgress } from './restore-progress';
import type { ProcessorStatus } from './schema';

/** What GET /status is assembled from: what the processor already tracks. */
export interface StatusSources {
  instanceId: string | null;
  ready: boolean;
  tasks: Pick<TaskLifecycle, 'owned' | 'stateOf'>;
  restores: RestoreProgress;
  commitLatency: CommitLatencyWindow;
  /** Events only, over a short window (what the scanner paces a sweep by); absent: reported as nothing committed. */
  eventCommitLatency?: Pick<EventCommitLatency, 'percentiles'>;
  metrics: Pick<ProcessorMetrics, 'commands' | 'events' | 'deadLetters'>;
  inputLag: () => Promise<InputLag[] | null>;
  now?: () => number;
}

/** The processor's status now (see ProcessorStatusSchema). */
export async function processorStatus(s: StatusSources): Promise<ProcessorStatus> {
  const now = (s.now ?? Date.now)();
  const owned = s.tasks.owned;
  const restores = s.restores.view(owned);
  const [commands, events, deadLetters, lag] = await Promise.all([
    countsOf(s.metrics.commands, 'outcome'),
    countsOf(s.metrics.events, 'outcome'),
    countsOf(s.metrics.deadLetters, 'code'),
    s.inputLag(),
  ]);
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    at: iso(now),
    instanceId: s.instanceId,
    ready: s.ready,
    tasks: owned.map((task) => ({ task, state: s.tasks.stateOf(task) ?? 'CREATED' })),
    restores: {
      inProgress: restores.inProgress.map((r) => ({ ...r, startedAt: iso(r.startedAt) })),
      last: restores.last.map((r) => ({ ...r, finishedAt: iso(r.finishedAt) })),
    },
    commitLatency: s.commitLatency.percentiles(now),
    eventCommitLatency: s.eventCommitLatency?.percentiles(now) ?? {
      windowSeconds: EVENT_LATENCY_WINDOW_SECONDS,
      count: 0,
      p50Ms: null,
      p99Ms: null,
    },
    commands,
    events,
    deadLetters: { total: Object.values(deadLetters).reduce((a, b) => a + b, 0), byCode: deadLetters },
    // Only this instance's partitions: with several instances each shows its own.
    consumerLag: lag === null ? null : lag.filter((l) => owned.includes(l.partition)),
  };
}

/** A labelled counter's values, by that label. */
async function countsOf<L extends string>(counter: Counter<L>, label: L): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const { labels, value } of (await counter.get()).values) {
    const key = String((labels as Partial<Record<L, string | number>>)[label] ?? '');
    if (value > 0) counts[key] = (counts[key] ?? 0) + value;
  }
  return counts;
}
