import type { Admin } from 'kafkajs';
import { createTopics, type TopicSpec } from './kafka';
import { uniqueName } from './names';

/**
 * The record limits the processor creates its topics with (services/processor/src/kafka/
 * limits.ts), mirrored so that testkit needs no service; test/deployment.test.ts pins them equal.
 */
export const PROCESSOR_TOPIC_LIMITS = {
  /** max.message.bytes of the events, commands, changelog and results topics (Kafka's default). */
  topicMaxMessageBytes: 1_048_588,
  /** max.message.bytes of the dead-letter topic: an input at the limit fits with its dlq.* headers. */
  deadLetterMaxMessageBytes: 8 * 1_048_576,
} as const;

/** The app id and topic names of one processor deployment (one state store, `accounts`). */
export interface Deployment {
  appId: string;
  eventsTopic: string;
  commandsTopic: string;
  resultsTopic: string;
  deadLetterTopic: string;
  /** `<app>-<store>-changelog`, Kafka Streams' naming, as the processor derives it. */
  changelogTopic: string;
  partitions: number;
}

/** A deployment no other one shares: its app id is `prefix` made unique, its topics named after it. */
export function newDeployment(prefix: string, partitions = 4): Deployment {
  const appId = uniqueName(prefix);
  return {
    appId,
    eventsTopic: `${appId}-events`,
    commandsTopic: `${appId}-commands`,
    resultsTopic: `${appId}-results`,
    deadLetterTopic: `${appId}-dlq`,
    changelogTopic: `${appId}-accounts-changelog`,
    partitions,
  };
}

/**
 * The deployment's topics as the processor's provisioning creates them (partitions, a compacted
 * changelog, max.message.bytes), so that a deployment can be seeded before its processor
 * starts, and the processor finds nothing to warn about. `extra` topics get the partitions only.
 */
export function deploymentTopics(d: Deployment, extra: string[] = []): TopicSpec[] {
  const limit = { 'max.message.bytes': String(PROCESSOR_TOPIC_LIMITS.topicMaxMessageBytes) };
  return [
    ...extra.map((topic) => ({ topic, partitions: d.partitions })),
    { topic: d.eventsTopic, partitions: d.partitions, configs: limit },
    { topic: d.commandsTopic, partitions: d.partitions, configs: limit },
    { topic: d.changelogTopic, partitions: d.partitions, compacted: true, configs: limit },
    { topic: d.resultsTopic, partitions: d.partitions, configs: limit },
    {
      topic: d.deadLetterTopic,
      partitions: 1,
      configs: { 'max.message.bytes': String(PROCESSOR_TOPIC_LIMITS.deadLetterMaxMessageBytes) },
    },
  ];
}

export async function createDeploymentTopics(admin: Admin, d: Deployment, extra: string[] = []): Promise<void> {
  await createTopics(admin, deploymentTopics(d, extra));
}
