/**
 * @state-relay/processor/internal: for the processor's tests, the benchmark and tools, not a
 * stable API. The in-loop extension port (ProcessorDeps.extension) lets them run code inside a
 * task's fetch loop and see every commit; it may change with the loop. Embedders import
 * @state-relay/processor.
 */
export type { CommitReport, InputBatch, ProcessingExtension, TaskContext } from './extension';
// The fold path without Kafka: the replay benchmark (pnpm bench:replay) drives it with a real store.
export { foldRecord, type FoldContext, type FoldInput } from './tasks/fold';
export { currentEntity, unitChanges, UnitOfWork } from './tasks/unit-of-work';
export { DEAD_LETTER_MAX_BYTES, DEFAULT_ENTITY_MAX_BYTES } from './kafka/limits';
