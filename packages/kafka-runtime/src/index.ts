export { CoPartitionedAssigner, coPartitionedAssigner, tasksOf } from './assigner';
export type { CoPartitionedAssignerOptions } from './assigner';
export {
  decodeDuplicateRefusal,
  decodeMemberIdentity,
  duplicateMembers,
  duplicateRefusalOf,
  encodeDuplicateRefusal,
  encodeMemberData,
  encodeMemberIdentity,
  decodeMemberTasks,
  memberIdentityOf,
  memberTasksOf,
} from './member-identity';
export type { DuplicateRefusal, IdentifiedMember, MemberIdentity, MemberTasks } from './member-identity';
export { stickyAssignment } from './sticky-assignment';
export type { AssignmentMember, StoreHeld } from './sticky-assignment';
export { duplicateRefusalFor, instanceIdClaims } from './instance-claims';
export type { InstanceIdClaims, InstanceIdHolder } from './instance-claims';
export {
  ensureTopics,
  brokerDefaultReplicationFactor,
  missingTopics,
  assertCoPartitioned,
  partitionCounts,
  endOffsets,
  waitForLeaders,
  topicConfigValues,
} from './topics';
export type { TopicRequirement } from './topics';
export { restoreChangelog } from './restorer';
export { settledEnds } from './settled-ends';
export type { SettledEndsOptions } from './settled-ends';
export type { RestoreRequest, RestoreRecord, RestoreSummary } from './restorer';
export {
  initTaskProducer,
  initTransactionalProducer,
  instanceTransactionalId,
  transactionalIdFor,
} from './transactional';
export {
  taskOwnership,
  groupMembership,
  committedOffsets,
  deleteRetentionMs,
  DEFAULT_DELETE_RETENTION_MS,
} from './ownership';
export type { TaskOwnership, CommittedOffsetsOptions } from './ownership';
export type { TaskProducerOptions } from './transactional';
export {
  KafkaRuntimeError,
  KafkaRuntimeErrorCodes,
  NotCoPartitionedError,
  OffsetOutOfRangeError,
  UnsupportedKafkajsError,
  KafkajsShapeError,
  KafkajsNotPatchedError,
  BrokerTooOldError,
  isFencedError,
  isStaleMemberError,
  recordRejection,
  RECORD_REJECTED_TYPES,
} from './errors';
export type { KafkaRuntimeErrorCode } from './errors';
export { withCoordinatorCache } from './coordinator-cache';
export {
  SUPPORTED_KAFKAJS_VERSION,
  assertSupportedKafkajs,
  causes,
  isConsumerNotRunningError,
  // Instrumentation only: the benchmark's transaction and fetch timing.
  interceptClientCreation,
  // Exactly-once v2 (KIP-447), from the kafkajs patch.
  assertEosV2Support,
  assertKafkajsPatched,
  supportsEosV2,
  EOS_V2_VERSIONS,
} from './kafkajs';
export {
  watchConsumer,
  replacementDelayMs,
  retireConsumer,
  ReplacingConsumer,
  OWNER_REPLACES,
  RUN_SETTLE_MS,
} from './consumer-watch';
export type { ConsumerDeath, ConsumerWatch, ConsumerWatchOptions, ReplacingConsumerOptions } from './consumer-watch';
export { withDeadline } from './deadline';
export type { OnDeadline } from './deadline';
export { ReplaceableAdmin, AdminCallTimeoutError, DEFAULT_ADMIN_CALL_TIMEOUT_MS } from './replaceable-admin';
export type { AdminCalls, ReplaceableAdminOptions } from './replaceable-admin';
export { PartitionReader } from './partition-reader';
export type { FetchedPart, PartitionReaderOptions } from './partition-reader';
export {
  boundedSlices,
  slicesOf,
  recordBytes,
  DEFAULT_MAX_MESSAGE_BYTES,
  MAX_REQUEST_BYTES,
  RECORD_OVERHEAD_BYTES,
} from './request-slices';
export type { TopicMessages } from './request-slices';
