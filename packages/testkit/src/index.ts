export { startKafka, BrokerAnswers } from './kafka-container';
export type { KafkaContainerOptions, StartedKafka } from './kafka-container';
export { kafkaImage, KAFKA_VERSION } from './images';
export { kafkaClient, createTopics, readTopic } from './kafka';
export type { TopicSpec, ConsumedRecord, ReadTopicOptions } from './kafka';
export { uniqueName } from './names';
export { waitUntil } from './wait';
export type { WaitOptions } from './wait';
export { freePort, ephemeralRange } from './free-port';

/** Bootstrap servers of this test run's shared broker (set by the integration globalSetup). */
export function testBrokers(): string[] {
  const brokers = process.env.STATE_RELAY_TEST_BROKERS;
  if (!brokers)
    throw new Error(
      'STATE_RELAY_TEST_BROKERS is not set: run integration tests through jest --selectProjects integration',
    );
  return brokers.split(',');
}
export { metricSum } from './prometheus';
export { rawHttp, type RawHttpAnswer } from './raw-http';
export { newDeployment, deploymentTopics, createDeploymentTopics, PROCESSOR_TOPIC_LIMITS } from './deployment';
export type { Deployment } from './deployment';
export { LatencyHistogram, percentileOf, type LatencySummary } from './report/histogram';
export { replaceDocsBlock, writeDocsBlock, formatWithPrettier } from './report/docs-block';
export { lineChart, niceCeil, logTicks } from './report/svg-chart';
export type { LineChart, ChartPanel, ChartSeries, ChartAxis } from './report/svg-chart';
export {
  startSecureKafka,
  startSecureKafkaCluster,
  type SecureKafka,
  type SecureKafkaCluster,
  type KafkaCredentials,
} from './secure-kafka';
export { makeTestCa } from './broker-security';
export * from './kafka-cluster';
export * from './coordinators';
export { longestCommitGaps, type CommitGap, type TaskCommit } from './report/commit-gaps';
