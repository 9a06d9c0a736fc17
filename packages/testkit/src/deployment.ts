import {
  DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES,
  relayTopicLayout,
  TOPIC_MAX_MESSAGE_BYTES,
  type RelayTopics,
} from '@state-relay/contracts';
import type { Admin } from 'kafkajs';
import { createTopics, type TopicSpec } from './kafka';
import { uniqueName } from './names';

/** The record limits the processor creates its topics with (@state-relay/contracts, topics.ts). */
export const PROCESSOR_TOPIC_LIMITS = {
  topicMaxMessageBytes: TOPIC_MAX_MESSAGE_BYTES,
  deadLetterMaxMessageBytes: DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES,
} as const;

/** The app id and topic names of one processor deployment (one state store, `accounts`). */
export interface Deployment extends RelayTopics {
  appId: string;
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
  return [...extra.map((topic) => ({ topic, partitions: d.partitions })), ...relayTopicLayout(d, d.partitions)];
}

export async function createDeploymentTopics(admin: Admin, d: Deployment, extra: string[] = []): Promise<void> {
  await createTopics(admin, deploymentTopics(d, extra));
}
