// Everything the benchmark drives, in one place. bench/ is not a workspace package and adds
// no dependencies, so it imports the built packages and services by path (tsc -b builds them
// first through the project references), and the two libraries it uses directly, kafkajs and
// pino, from the processor's own dependencies: the very copies the processor runs with.
export * as kafkajs from '../../services/processor/node_modules/kafkajs';
export type {
  Kafka,
  Producer,
  Consumer,
  Admin,
  Message,
  KafkaMessage,
} from '../../services/processor/node_modules/kafkajs';
export { default as pino } from '../../services/processor/node_modules/pino';
export type { Logger } from '../../services/processor/node_modules/pino';

export {
  Processor,
  createProcessorMetrics,
  loadConfig,
  type AggregateInput,
  type CommitReport,
  type InputBatch,
  type ProcessingExtension,
  type ProcessorConfig,
  type TaskContext,
} from '../../services/processor/dist/index';

export { accountsDomain, applyAccountEvent, markDormant, DORMANCY_SWEEP } from '../../packages/accounts/dist/index';
export { accountsOracle, generateAccountEvents, mulberry32 } from '../../packages/accounts/dist/testing/index';
export type { KeyedEvent } from '../../packages/domain/dist/index';
export {
  changelogTopicName,
  commandIdFor,
  decodeCommandResult,
  encodeCommand,
  encodeEvent,
  encodeStoredEntity,
  decodeStoredEntity,
  type DomainEvent,
  type StoredEntity,
  type UpdateCommand,
} from '../../packages/contracts/dist/index';
export { evaluateCondition, type Action, type Condition, type JsonObject } from '../../packages/rules/dist/index';
export { TaskStore } from '../../packages/store/dist/index';
export { initTaskProducer, ensureTopics } from '../../packages/kafka-runtime/dist/index';
export { freePort, startKafka, kafkaImage, metricSum, type StartedKafka } from '../../packages/testkit/dist/index';
