import { COMMAND_OUTCOMES, DEAD_LETTER_CODES, DECODE_ERROR_CODES } from '@state-relay/contracts';
import { createServiceRegistry, httpRequestDuration, LATENCY_BUCKETS, metricFactory } from '@state-relay/service-kit';
import { collectCommittedLag, type CommittedLagSource } from './status/committed-lag';
import { TaskFailureKinds } from './tasks/errors';

// Label values exported at 0 from the start (see MetricFactory.counter), so alerts on increase()
// see the first dead letter or failure and dashboards show every outcome. The task states are
// tasks/task.ts's TASK_STATES, which imports this file's type (a test checks they match).
const TASK_STATES = ['CREATED', 'RESTORING', 'RUNNING', 'FAILED'] as const;
const TRANSITION_TARGETS = [...TASK_STATES, 'CLOSED'] as const;
const EVENT_OUTCOMES = ['changed', 'unchanged', 'dead_letter'] as const;
const INSTANCE_TRANSACTION_OUTCOMES = ['committed', 'stale-member', 'expired', 'fenced', 'refused', 'failed'] as const;
const DEAD_LETTER_CODE_VALUES = [...Object.values(DECODE_ERROR_CODES), ...Object.values(DEAD_LETTER_CODES)];
const each = <K extends string>(key: K, values: readonly string[]) =>
  values.map((value) => ({ [key]: value }) as Record<K, string>);

/**
 * The processor's Prometheus metrics, in one registry per processor instance, with Node's default
 * metrics under their standard names labelled `service="processor"`. The README's metrics table lists
 * every one (a test compares them).
 */
export function createProcessorMetrics() {
  const registry = createServiceRegistry('processor');
  const metrics = metricFactory(registry);
  const taskStates = metrics.gauge(
    'processor_tasks',
    'Tasks of this instance by lifecycle state (CREATED, RESTORING, RUNNING, FAILED)',
    ['state'],
  );
  for (const state of TASK_STATES) taskStates.set({ state }, 0);
  let committedLagSource: CommittedLagSource | undefined;
  return {
    registry,
    httpRequestDuration: httpRequestDuration(metrics, 'processor'),
    events: metrics.counter(
      'processor_events_total',
      'Events consumed, by outcome (changed, unchanged, dead_letter)',
      ['outcome'],
      each('outcome', EVENT_OUTCOMES),
    ),
    commands: metrics.counter(
      'processor_commands_total',
      'Update commands consumed, by result outcome (or dead_letter)',
      ['outcome'],
      each('outcome', [...COMMAND_OUTCOMES, 'dead_letter']),
    ),
    deadLetters: metrics.counter(
      'processor_dead_letters_total',
      'Records sent to the dead-letter topic (committed), by dlq.code (a decode error code, EVENT_INVALID, PROCESSING_FAILED, ENTITY_TOO_LARGE, RECORD_REJECTED)',
      ['code'],
      each('code', DEAD_LETTER_CODE_VALUES),
    ),
    poisonIsolations: metrics.counter(
      'processor_poison_isolations_total',
      'Times a task isolated a record (one record per transaction) after POISON_MAX_ATTEMPTS failures at the same position',
    ),
    poisonRecords: metrics.counter(
      'processor_poison_records_total',
      'Records found by isolation and sent to the dead-letter topic (RECORD_REJECTED or PROCESSING_FAILED)',
    ),
    commitSeconds: metrics.histogram(
      'processor_commit_duration_seconds',
      'Time to commit one unit of work in Kafka (one transaction: its sends, sendOffsets and commit; the SQLite flush after it is not included)',
      LATENCY_BUCKETS,
    ),
    transactions: metrics.counter(
      'processor_transactions_total',
      'Units of work committed, per task (EXACTLY_ONCE=v1: one Kafka transaction each, at most one per task per commit interval, or per full unit; v2: each a part of the instance transaction)',
      ['task'],
    ),
    instanceTransactions: metrics.counter(
      'processor_instance_transactions_total',
      'EXACTLY_ONCE=v2: Kafka transactions of the instance (every RUNNING task in one, at most one per commit interval, or per full unit), by outcome: committed, stale-member (the group moved on), expired (open past TRANSACTION_TIMEOUT_MS), fenced (another process took the id), refused (the broker refused a record: each task then commits alone), failed',
      ['outcome'],
      each('outcome', INSTANCE_TRANSACTION_OUTCOMES),
    ),
    taskResumes: metrics.counter(
      'processor_task_resumes_total',
      'EXACTLY_ONCE=v2: failed tasks that went on from their last commit without fence or restore (their transaction was refused as the group moved on, and the same member kept them)',
    ),
    commitPartsRejected: metrics.counter(
      'processor_commit_parts_rejected_total',
      'EXACTLY_ONCE=v2: task units dropped unsent because the task incarnation that built them no longer held the task (revoked, rejoined, failed) or there was no group membership to fence them with',
    ),
    taskStates,
    taskTransitions: metrics.counter(
      'processor_task_transitions_total',
      'Task lifecycle transitions, by the state entered',
      ['to'],
      each('to', TRANSITION_TARGETS),
    ),
    taskFailures: metrics.counter(
      'processor_task_failures_total',
      'Tasks that left RUNNING or failed to reach it, by kind (fenced, commit, fold, store, restore); each is retried',
      ['kind'],
      each('kind', Object.values(TaskFailureKinds)),
    ),
    consumerReplacements: metrics.counter(
      'processor_consumer_replacements_total',
      'Group consumers replaced in-process because kafkajs gave up on them (crashed) or they stopped fetching (stalled)',
      ['reason'],
    ),
    adminReplacements: metrics.counter(
      'processor_admin_replacements_total',
      'Admin clients (task ownership, committed offsets, changelog ends) replaced because a call failed or got no answer within 40 s',
    ),
    commandSharePauses: metrics.counter(
      'processor_command_share_pauses_total',
      "Times a task paused its commands partition because its open unit's commands reached COMMAND_SHARE (records or fold time); it resumes once that unit commits",
    ),
    backPressurePauses: metrics.counter(
      'processor_backpressure_pauses_total',
      'Times a task paused its partitions because its uncommitted records reached MAX_UNCOMMITTED_RECORDS',
    ),
    commitLatencySeconds: metrics.histogram(
      'processor_event_commit_latency_seconds',
      'From an input record’s timestamp to the commit of the transaction that applied it',
      LATENCY_BUCKETS,
    ),
    restoredRecords: metrics.counter('processor_restore_records_total', 'Changelog records replayed into task stores'),
    restoringTasks: metrics.gauge(
      'processor_restoring_tasks',
      'Tasks replaying their changelog right now (not yet processing)',
    ),
    storeEntities: metrics.gauge('processor_store_entities', 'Entities in each task store', ['task']),
    storeBytes: metrics.gauge('processor_store_bytes', 'Size of each task store on disk (database and WAL)', ['task']),
    // Set from each processed batch (kafkajs's offsetLag): a consumer that stops fetching keeps its last value.
    consumerLag: metrics.gauge(
      'processor_consumer_lag_records',
      'Records between the last processed batch and the partition end, per input topic and partition',
      ['topic', 'partition'],
    ),
    // Read from Kafka at scrape time: it grows whenever this instance stops committing, for whatever reason.
    committedLag: metrics.gauge(
      'processor_committed_lag_records',
      'Records between the group’s committed offset and the partition end, for the input partitions this instance owns, read at scrape time (no series while Kafka does not answer within 2 s)',
      ['topic', 'partition'],
      function () {
        return collectCommittedLag(this, committedLagSource);
      },
    ),
    /** Where processor_committed_lag_records is read from: the processor sets it on start, clears it on stop. */
    readCommittedLagFrom(source: CommittedLagSource | undefined): void {
      committedLagSource = source;
    },
    staleOffsets: metrics.counter(
      'processor_stale_offsets_total',
      'Task starts where the group’s committed offset of an input was behind the position its restored store reflects (read stale after the fence); the task continued from the store’s, by input topic',
      ['topic'],
    ),
    tasksOwned: metrics.gauge('processor_tasks_owned', 'Tasks (partitions) owned by this instance'),
  };
}

export type ProcessorMetrics = ReturnType<typeof createProcessorMetrics>;
