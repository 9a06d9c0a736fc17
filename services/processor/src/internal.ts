/**
 * @state-relay/processor/internal: for the processor's tests, the benchmark and tools, not a
 * stable API. The in-loop extension port (ProcessorDeps.extension) lets them run code inside a
 * task's fetch loop and see every commit; it may change with the loop. Embedders import
 * @state-relay/processor.
 */
export type { CommitReport, InputBatch, ProcessingExtension, TaskContext } from './extension';
