import { logLevel as kafkaLogLevel, type LogEntry } from 'kafkajs';
import type { Logger } from 'pino';

/** kafkajs log lines into pino, one level down: kafkajs is loud about errors it retries. */
export function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, ...extra } = log;
      const child = { kafkajs: extra };
      if (level === kafkaLogLevel.ERROR) logger.warn(child, message);
      else if (level === kafkaLogLevel.WARN) logger.info(child, message);
      else logger.debug(child, message);
    };
}
