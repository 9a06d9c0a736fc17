// What an embedder builds a processor from. Tests and the benchmark reach further through
// ./internal (@state-relay/processor/internal).
export { aggregate } from './aggregate';
export type { AggregateInput, AggregateResult, CommandVerdict } from './aggregate';
export { loadConfig } from './config';
export { ConfigError } from '@state-relay/service-kit';
export type { ProcessorConfig } from './config';
export { createProcessorMetrics } from './metrics';
export type { ProcessorMetrics } from './metrics';
export { Processor } from './processor';
export { buildApp } from './http/app';
export type { ProcessorDeps, TaskView } from './processor';
