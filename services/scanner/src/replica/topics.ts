import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';
import { sleep } from '../scans/wait';

/**
 * Waits until every topic exists. The processor owns and creates them; the scanner never does
 * (auto-creation would make them with the broker's defaults: wrong partition count, not compacted).
 */
export async function waitForTopics(
  admin: Pick<Admin, 'listTopics'>,
  topics: string[],
  logger: Logger,
  signal: AbortSignal,
): Promise<void> {
  let lastLog = 0;
  for (;;) {
    const missing = await admin
      .listTopics()
      .then((existing) => topics.filter((t) => !existing.includes(t)))
      .catch(() => topics);
    if (missing.length === 0) return;
    if (Date.now() - lastLog > 10_000) {
      logger.info({ missing }, 'waiting for the processor to create its topics');
      lastLog = Date.now();
    }
    await sleep(500, signal);
  }
}
