import { assertSupportedKafkajs } from '@state-relay/kafka-runtime';
import { Kafka, logLevel as kafkaLogLevel, type LogEntry, type RetryOptions } from 'kafkajs';
import type { Logger } from 'pino';
import { kafkajsSecurity, type KafkaConnection } from './config/kafka-connection';
import { ServiceError } from './errors';

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
export function createKafkaClient(options: KafkaClientOptions): Kafka {
  assertSupportedKafkajs();
  for (const warning of connectionWarnings(options.connection)) options.logger.warn(warning);
  return kafkaWith(options, KAFKA_RETRY);
}

/** What a connection that works but is unsafe should say at start (never a secret). */
export function connectionWarnings(connection: KafkaConnection | undefined): string[] {
  const warnings: string[] = [];
  if (connection?.ssl?.rejectUnauthorized === false) {
    warnings.push("KAFKA_SSL_VERIFY=false: the brokers' certificates and host names are not checked");
  }
  if (connection?.protocol === 'SASL_PLAINTEXT' && connection.sasl?.mechanism === 'PLAIN') {
    warnings.push(
      'KAFKA_SASL_MECHANISM=PLAIN over KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT: the SASL password crosses the ' +
        'network in cleartext; use SASL_SSL, or SCRAM-SHA-512 at least',
    );
  }
  return warnings;
}

function kafkaWith({ clientId, brokers, connection, logger }: KafkaClientOptions, retry: RetryOptions): Kafka {
  return new Kafka({
    clientId,
    brokers,
    ...kafkajsSecurity(connection),
    logCreator: kafkaLogCreator(logger.child({ component: 'kafkajs' })),
    retry,
  });
}

export const KAFKA_CONNECTION_REFUSED = 'KAFKA_CONNECTION_REFUSED' as const;

/** The brokers refused the credentials, or their certificate was not trusted: no retry helps. */
export class KafkaConnectionRefusedError extends ServiceError<typeof KAFKA_CONNECTION_REFUSED> {
  static readonly code = KAFKA_CONNECTION_REFUSED;
  override readonly name = 'KafkaConnectionRefusedError';
}

/** Node's codes for a peer certificate TLS would not accept (tls.TLSSocket's verify errors). */
const UNTRUSTED_CERTIFICATE = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The error and everything it wraps (kafkajs's retrier keeps the first failure as `cause`). */
function* causes(err: unknown): Generator<{ name?: unknown; code?: unknown; message?: unknown }> {
  const seen = new Set<unknown>();
  let at: unknown = err;
  while (typeof at === 'object' && at !== null && !seen.has(at)) {
    seen.add(at);
    yield at as { name?: unknown; code?: unknown; message?: unknown };
    const next = at as { cause?: unknown; originalError?: unknown };
    at = next.cause ?? next.originalError;
  }
}

/**
 * A failure to reach Kafka that only the configuration can fix, as an error naming the settings
 * (never a secret): the SASL credentials refused, or the broker's certificate not trusted.
 * undefined for anything else (a broker down, a timeout): those are retried as usual.
 */
export function connectionRefusal(
  err: unknown,
  connection: Pick<KafkaConnection, 'caFile' | 'sasl'> | undefined,
): KafkaConnectionRefusedError | undefined {
  const caFile = connection?.caFile;
  for (const e of causes(err)) {
    if (e.name === 'KafkaJSSASLAuthenticationError') {
      const sasl = connection?.sasl;
      return new KafkaConnectionRefusedError(
        KAFKA_CONNECTION_REFUSED,
        `Kafka refused the SASL credentials of KAFKA_SASL_USERNAME=${sasl?.username ?? '(unset)'} with ` +
          `KAFKA_SASL_MECHANISM=${sasl?.mechanism ?? '(unset)'}: check KAFKA_SASL_PASSWORD (or the file KAFKA_SASL_PASSWORD_FILE ` +
          'names) and that the user exists on the brokers for that mechanism',
      );
    }
    if (typeof e.code === 'string' && UNTRUSTED_CERTIFICATE.has(e.code)) {
      return new KafkaConnectionRefusedError(
        KAFKA_CONNECTION_REFUSED,
        `the broker's TLS certificate was not accepted (${e.code}): check KAFKA_SSL_CA_FILE ` +
          `(${caFile ? `now ${caFile}` : 'unset: only the system CAs are trusted'}) and that the certificate names the ` +
          'host in KAFKA_BROKERS; KAFKA_SSL_VERIFY=false skips the check (never in production)',
      );
    }
  }
  return undefined;
}

/**
 * Connects once, without retries, before a service starts: credentials the brokers refuse and a
 * certificate TLS does not trust stop the start at once with an error naming the setting
 * (connectionRefusal), instead of a minute of retries ending in kafkajs's own message. Any other
 * failure is left to the start's own retrying calls.
 */
export async function checkKafkaConnection(options: KafkaClientOptions): Promise<void> {
  const { connection } = options;
  if (!connection || connection.protocol === 'PLAINTEXT') return;
  // A client of its own: kafkajs connects through the client's retry (KAFKA_RETRY, about a
  // minute for a certificate it does not trust), whatever retry the admin is given.
  const admin = kafkaWith(options, { retries: 0 }).admin();
  try {
    await admin.connect();
  } catch (err) {
    const refusal = connectionRefusal(err, connection);
    if (refusal) throw refusal;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
