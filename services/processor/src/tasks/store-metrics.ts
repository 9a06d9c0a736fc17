import type { TaskLifecycle } from './lifecycle';

/** How often the store gauges (entities, bytes per task) are refreshed. */
const STORE_METRICS_EVERY_MS = 5_000;

/** Refreshes every task's store gauges periodically, without keeping the process alive; returns the stop. */
export function refreshStoreMetrics(lifecycle: Pick<TaskLifecycle, 'forEachTask'>): () => void {
  const timer = setInterval(() => lifecycle.forEachTask((t) => t.refreshStoreMetrics()), STORE_METRICS_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
