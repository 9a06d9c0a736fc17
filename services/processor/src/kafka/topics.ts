import {
  assertCoPartitioned,
  DEFAULT_MAX_MESSAGE_BYTES,
  deleteRetentionMs,
  ensureTopics,
} from '@state-relay/kafka-runtime';
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';
import type { ProcessorConfig } from '../config';

/** Record-batch limit of the dead-letter topic (the broker default is 1 MB). */
const DEAD_LETTER_MAX_BYTES = 8 * 1024 * 1024;

type TopicsConfig = Pick<
  ProcessorConfig,
  'eventsTopic' | 'commandsTopic' | 'changelogTopic' | 'resultsTopic' | 'deadLetterTopic' | 'partitions'
>;

/**
 * Provisioning: creates the processor's topics that are missing, refuses inputs and a changelog
 * that are not co-partitioned, and reads the changelog's delete.retention.ms (what restore
 * trusts a local store for).
 */
export async function provisionTopics(
  admin: Admin,
  config: TopicsConfig,
  logger: Logger,
): Promise<{ deleteRetentionMs: number }> {
  const created = await ensureTopics(admin, [
    { topic: config.eventsTopic, partitions: config.partitions },
    // Set, not inherited from the broker: the scanner refuses a scan whose command could not fit.
    {
      topic: config.commandsTopic,
      partitions: config.partitions,
      configs: { 'max.message.bytes': String(DEFAULT_MAX_MESSAGE_BYTES) },
    },
    { topic: config.changelogTopic, partitions: config.partitions, compacted: true },
    { topic: config.resultsTopic, partitions: config.partitions },
    // A dead letter is the original record plus ~250 bytes of dlq.* headers: an input the
    // broker accepted at its 1 MB limit must still fit here.
    { topic: config.deadLetterTopic, partitions: 1, configs: { 'max.message.bytes': String(DEAD_LETTER_MAX_BYTES) } },
  ]);
  if (created.length > 0) logger.info({ topics: created }, 'created missing topics');
  const inputs = await assertCoPartitioned(admin, [config.eventsTopic, config.commandsTopic]);
  const changelog = await assertCoPartitioned(admin, [config.eventsTopic, config.changelogTopic]).catch(() => -1);
  if (changelog !== inputs) {
    throw new Error(
      `changelog ${config.changelogTopic} must have as many partitions as ${config.eventsTopic} (${inputs})`,
    );
  }
  return { deleteRetentionMs: await deleteRetentionMs(admin, config.changelogTopic) };
}
