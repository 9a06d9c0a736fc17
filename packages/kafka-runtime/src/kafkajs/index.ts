// The kafkajs adapter: every reach into kafkajs past its public API (private symbols, modules
// under kafkajs/src, prototype patches, error shapes and message text). A kafkajs upgrade, or a
// move to another client, is work in this folder; test/kafkajs-internals.test.ts pins each shape.
export { SUPPORTED_KAFKAJS_VERSION, assertSupportedKafkajs, installedKafkajsVersion } from './version';
export {
  causes,
  kafkaErrorType,
  offsetOutOfRangePartition,
  hasProducerFencedMessage,
  isConsumerNotRunningError,
  CONSUMER_NOT_RUNNING_MESSAGE,
} from './error-shapes';
export { withCoordinatorLookup, withTargetTopics, interceptClientCreation, CREATE_CLUSTER_SYMBOL } from './internals';
export type { AddTargetTopics, FindCoordinator } from './internals';
export { openTopicFetcher, batchReader, READ_COMMITTED, TOPIC_FETCHER_CLUSTER_METHODS } from './topic-fetcher';
export type { TopicFetcher, FetchRequest, FetchedBatch, FetchPartitionData } from './topic-fetcher';
export { API_KEYS, EOS_V2_VERSIONS, assertKafkajsPatched, implementedVersions } from './patch';
export { assertEosV2Support, assertEosV2Versions, groupCoordinatorVersions, supportsEosV2 } from './eos-v2';
export type { ApiVersionRange, ApiVersionTable } from './eos-v2';
