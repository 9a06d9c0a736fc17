import { dirname, join } from 'node:path';
// Everything the benchmarks drive, in one place, imported by package name (the workspace
// dependencies in bench/package.json; tsc -b builds them first through the project references).
// kafkajs and pino are the same versions the services pin: pnpm links one copy of each, so the
// kafkajs the benchmark's processor instruments (children/transaction-timing.ts) is the one the
// processor runs with.
export * as kafkajs from 'kafkajs';
export type { Kafka, Producer, Consumer, Admin, Message, KafkaMessage } from 'kafkajs';
export { default as pino } from 'pino';
export type { Logger } from 'pino';

export {
  Processor,
  buildApp as buildProcessorApp,
  createProcessorMetrics,
  loadConfig,
  type AggregateInput,
  type ProcessorConfig,
} from '@state-relay/processor';
export type { CommitReport, InputBatch, ProcessingExtension, TaskContext } from '@state-relay/processor/internal';
export {
  currentEntity,
  DEAD_LETTER_MAX_BYTES,
  DEFAULT_ENTITY_MAX_BYTES,
  foldRecord,
  unitChanges,
  UnitOfWork,
  type FoldContext,
} from '@state-relay/processor/internal';

export { accountsDomain, applyAccountEvent, markDormant, DORMANCY_SWEEP } from '@state-relay/accounts';
export { accountsOracle, generateAccountEvents, mulberry32 } from '@state-relay/accounts/testing';
export type { KeyedEvent } from '@state-relay/domain';
export {
  changelogTopicName,
  commandIdFor,
  decodeCommandResult,
  encodeCommand,
  encodeEvent,
  encodeStoredEntity,
  decodeStoredEntity,
  decodeEvent,
  type DomainEvent,
  type StoredEntity,
  type UpdateCommand,
} from '@state-relay/contracts';
export { evaluateCondition, type Action, type Condition, type JsonObject } from '@state-relay/rules';
export { TaskStore } from '@state-relay/store';
export {
  initTaskProducer,
  instanceTransactionalId,
  PartitionReader,
  interceptClientCreation,
} from '@state-relay/kafka-runtime';
export {
  freePort,
  startKafka,
  kafkaImage,
  metricSum,
  createTopics,
  newDeployment,
  deploymentTopics,
  LatencyHistogram,
  lineChart,
  logTicks,
  niceCeil,
  writeDocsBlock,
  formatWithPrettier,
  readTopic,
  startKafkaCluster,
  busiestLeader,
  partitionLeaders,
  shortIsrs,
  transactionCoordinatorOf,
  longestCommitGaps,
  type CommitGap,
  type StartedKafkaCluster,
  type Deployment,
  type LatencySummary,
  type StartedKafka,
} from '@state-relay/testkit';

/** A service's built entry point (`dist/<file>`), to start it as its own process. */
export function serviceEntry(service: '@state-relay/scanner' | '@state-relay/processor', file: string): string {
  return join(dirname(require.resolve(`${service}/package.json`)), 'dist', file);
}
