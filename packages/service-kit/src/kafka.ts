import { assertSupportedKafkajs } from '@state-relay/kafka-runtime';
import { Kafka, logLevel as kafkaLogLevel, type LogEntry, type RetryOptions } from 'kafkajs';
import type { Logger } from 'pino';
import { kafkajsSecurity, type KafkaConnection } from './config/kafka-connection';

/**
 * The services' client retry: about a minute of back-off (200 ms doubling to 10 s, 10 times)
 * rides out a broker restart without giving up on the request.
 */
export const KAFKA_RETRY: RetryOptions = { retries: 10, initialRetryTime: 200, maxRetryTime: 10_000 };

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

export interface KafkaClientOptions {
  clientId: string;
  brokers: string[];
  /** TLS and SASL (kafkaConnectionFrom); PLAINTEXT when absent. */
  connection?: KafkaConnection;
  /** kafkajs's lines go to a child of it, `component: "kafkajs"`. */
  logger: Logger;
}

/**
 * A kafkajs client as both services use one: logs through pino, retries with KAFKA_RETRY.
 * Throws UnsupportedKafkajsError when the installed kafkajs is not the release kafka-runtime's
 * adapter is written against.
 */
export function createKafkaClient({ clientId, brokers, connection, logger }: KafkaClientOptions): Kafka {
  assertSupportedKafkajs();
  if (connection?.ssl?.rejectUnauthorized === false) {
    logger.warn("KAFKA_SSL_VERIFY=false: the brokers' certificates and host names are not checked");
  }
  return new Kafka({
    clientId,
    brokers,
    ...kafkajsSecurity(connection),
    logCreator: kafkaLogCreator(logger.child({ component: 'kafkajs' })),
    retry: KAFKA_RETRY,
  });
}
