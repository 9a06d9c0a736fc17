import { createServiceRegistry } from '@state-relay/service-kit';
import { Counter, Gauge, Histogram } from 'prom-client';

/**
 * The processor's Prometheus metrics, in one registry per processor instance, with Node's default
 * metrics under their standard names labelled `service="processor"`.
 */
export function createProcessorMetrics() {
  const registry = createServiceRegistry('processor');
  return {
    registry,
    events: new Counter({
      name: 'processor_events_total',
      help: 'Events consumed, by outcome (changed, unchanged, dead_letter)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    commands: new Counter({
      name: 'processor_commands_total',
      help: 'Update commands consumed, by result outcome (or dead_letter)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    commitSeconds: new Histogram({
      name: 'processor_commit_duration_seconds',
      help: 'Time to commit one unit of work in Kafka (one transaction: its sends, sendOffsets and commit; the SQLite flush after it is not included)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    transactions: new Counter({
      name: 'processor_transactions_total',
      help: 'Kafka transactions committed, per task (at most one per task per commit interval, or per full unit)',
      labelNames: ['task'] as const,
      registers: [registry],
    }),
    taskStates: new Gauge({
      name: 'processor_tasks',
      help: 'Tasks of this instance by lifecycle state (CREATED, RESTORING, RUNNING, FAILED)',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
    taskTransitions: new Counter({
      name: 'processor_task_transitions_total',
      help: 'Task lifecycle transitions, by the state entered',
      labelNames: ['to'] as const,
      registers: [registry],
    }),
    taskFailures: new Counter({
      name: 'processor_task_failures_total',
      help: 'Tasks that left RUNNING or failed to reach it, by kind (fenced, commit, store, restore); each is retried',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    consumerReplacements: new Counter({
      name: 'processor_consumer_replacements_total',
      help: 'Group consumers replaced in-process because kafkajs gave up on them (crashed) or they stopped fetching (stalled)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    backPressurePauses: new Counter({
      name: 'processor_backpressure_pauses_total',
      help: 'Times a task paused its partitions because its uncommitted records reached MAX_UNCOMMITTED_RECORDS',
      registers: [registry],
    }),
    commitLatencySeconds: new Histogram({
      name: 'processor_event_commit_latency_seconds',
      help: 'From an input record’s timestamp to the commit of the transaction that applied it',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    restoredRecords: new Counter({
      name: 'processor_restore_records_total',
      help: 'Changelog records replayed into task stores',
      registers: [registry],
    }),
    restoringTasks: new Gauge({
      name: 'processor_restoring_tasks',
      help: 'Tasks replaying their changelog right now (not yet processing)',
      registers: [registry],
    }),
    storeEntities: new Gauge({
      name: 'processor_store_entities',
      help: 'Entities in each task store',
      labelNames: ['task'] as const,
      registers: [registry],
    }),
    storeBytes: new Gauge({
      name: 'processor_store_bytes',
      help: 'Size of each task store on disk (database and WAL)',
      labelNames: ['task'] as const,
      registers: [registry],
    }),
    consumerLag: new Gauge({
      name: 'processor_consumer_lag_records',
      help: 'Records between the last processed batch and the partition end, per input topic and partition',
      labelNames: ['topic', 'partition'] as const,
      registers: [registry],
    }),
    tasksOwned: new Gauge({
      name: 'processor_tasks_owned',
      help: 'Tasks (partitions) owned by this instance',
      registers: [registry],
    }),
  };
}

export type ProcessorMetrics = ReturnType<typeof createProcessorMetrics>;
