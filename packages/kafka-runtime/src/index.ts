export { CoPartitionedAssigner, tasksOf } from './assigner';
export { ensureTopics, assertCoPartitioned, partitionCounts, endOffsets } from './topics';
export type { TopicRequirement } from './topics';
export { restoreChangelog } from './restorer';
export type { RestoreRequest, RestoreRecord, RestoreSummary } from './restorer';
export { connectTaskProducer, transactionalIdFor } from './transactional';
export type { TaskProducerOptions } from './transactional';
export { KafkaRuntimeError, KafkaRuntimeErrorCodes, NotCoPartitionedError, isFencedError } from './errors';
export type { KafkaRuntimeErrorCode } from './errors';
