import { relayTopicLayout } from '@state-relay/contracts';
import {
  assertCoPartitioned,
  deleteRetentionMs,
  ensureTopics,
  missingTopics,
  partitionCounts,
  topicConfigValues,
} from '@state-relay/kafka-runtime';
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';
import type { ProcessorConfig } from '../config';
import { INTERNAL_CODES, ProcessorError } from '../errors';
import { DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES, RECORD_ROOM_BYTES, TOPIC_MAX_MESSAGE_BYTES } from './limits';

type TopicsConfig = Pick<
  ProcessorConfig,
  | 'eventsTopic'
  | 'commandsTopic'
  | 'changelogTopic'
  | 'resultsTopic'
  | 'deadLetterTopic'
  | 'partitions'
  | 'entityMaxBytes'
  | 'topicsCreate'
  | 'topicReplicationFactor'
  | 'topicMinInsyncReplicas'
>;

/**
 * Provisioning: creates the processor's topics that are missing (each with an explicit
 * max.message.bytes), refuses inputs and a changelog that are not co-partitioned, warns about
 * existing topics whose record limit differs from what the processor relies on, and reads the
 * changelog's delete.retention.ms (what restore trusts a local store for).
 */
export async function provisionTopics(
  admin: Admin,
  config: TopicsConfig,
  logger: Logger,
): Promise<{ deleteRetentionMs: number }> {
  const layout = relayTopicLayout(config, config.partitions).map((t) => ({
    ...t,
    replicationFactor: config.topicReplicationFactor,
    configs: {
      ...t.configs,
      ...(config.topicMinInsyncReplicas > 0 && { 'min.insync.replicas': String(config.topicMinInsyncReplicas) }),
    },
  }));
  if (config.topicsCreate === 'true') {
    const created = await ensureTopics(admin, layout);
    if (created.length > 0) logger.info({ topics: created }, 'created missing topics');
  } else {
    const missing = await missingTopics(
      admin,
      layout.map((t) => t.topic),
    );
    if (missing.length > 0) {
      throw new ProcessorError(
        INTERNAL_CODES.TOPICS_NOT_AS_REQUIRED,
        `TOPICS_CREATE=false and these topics do not exist: ${missing.join(', ')} (create them as the processor README's "Topics" says)`,
      );
    }
  }
  const check = config.topicsCreate === 'false';
  // TOPICS_CREATE=false: every problem of the existing topics is named in one error, so an
  // operator fixes them in one pass; otherwise the first refusal stops the start.
  const problems: string[] = [];
  const refuse = (code: string, message: string): void => {
    if (!check) throw new ProcessorError(code, message);
    problems.push(message);
  };
  const policy = (await topicConfigValues(admin, [config.changelogTopic], 'cleanup.policy')).get(config.changelogTopic);
  if (policy !== undefined && !policy.split(',').includes('compact')) {
    refuse(
      INTERNAL_CODES.TOPICS_NOT_AS_REQUIRED,
      `changelog ${config.changelogTopic} must be compacted (cleanup.policy=compact), but its cleanup.policy is ${policy}`,
    );
  }
  const counts = await partitionCounts(admin, [config.eventsTopic, config.commandsTopic, config.changelogTopic]);
  const events = counts[config.eventsTopic];
  const commands = counts[config.commandsTopic];
  if (events !== commands) {
    if (!check) await assertCoPartitioned(admin, [config.eventsTopic, config.commandsTopic]); // throws, naming both
    problems.push(
      `inputs ${config.eventsTopic} (${events} partitions) and ${config.commandsTopic} (${commands}) must have as many partitions`,
    );
  }
  if (counts[config.changelogTopic] !== events) {
    refuse(
      INTERNAL_CODES.CHANGELOG_NOT_CO_PARTITIONED,
      `changelog ${config.changelogTopic} must have as many partitions as ${config.eventsTopic} (${events})` +
        (check ? `, but has ${counts[config.changelogTopic]}` : ''),
    );
  }
  for (const limit of await recordLimitProblems(admin, config)) {
    if (check) problems.push(limit.message);
    else logger.warn(limit.log, limit.warning);
  }
  if (problems.length > 0) {
    throw new ProcessorError(
      INTERNAL_CODES.TOPICS_NOT_AS_REQUIRED,
      `TOPICS_CREATE=false and the topics are not as the processor needs them: ${problems.join('; ')}`,
    );
  }
  return { deleteRetentionMs: await deleteRetentionMs(admin, config.changelogTopic) };
}

/**
 * Existing topics keep their configs: one that takes smaller records than the processor produces
 * refuses them at commit (such a record is then isolated and dead-lettered). Created topics are
 * warned about at start; with TOPICS_CREATE=false each is a problem that stops it.
 */
async function recordLimitProblems(
  admin: Admin,
  config: TopicsConfig,
): Promise<Array<{ message: string; warning: string; log: Record<string, unknown> }>> {
  const needs = new Map([
    [config.changelogTopic, config.entityMaxBytes + RECORD_ROOM_BYTES],
    [config.resultsTopic, TOPIC_MAX_MESSAGE_BYTES],
    [config.deadLetterTopic, DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES],
  ]);
  const actual = await topicConfigValues(admin, [...needs.keys()], 'max.message.bytes');
  const out: Array<{ message: string; warning: string; log: Record<string, unknown> }> = [];
  for (const [topic, need] of needs) {
    const has = Number(actual.get(topic));
    if (Number.isFinite(has) && has < need) {
      out.push({
        message: `${topic} has max.message.bytes=${has}, below the ${need} the processor may produce to it${topic === config.changelogTopic ? ' (or lower ENTITY_MAX_BYTES)' : ''}`,
        warning:
          'topic takes smaller records than the processor may produce (max.message.bytes); a record it refuses is dead-lettered after POISON_MAX_ATTEMPTS failures (for the changelog: lower ENTITY_MAX_BYTES)',
        log: { topic, maxMessageBytes: has, needed: need },
      });
    }
  }
  return out;
}
