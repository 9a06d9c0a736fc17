import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { startSecureKafka, uniqueName, type SecureKafka } from '@state-relay/testkit';
import pino from 'pino';
import { kafkaConnectionFrom, KAFKA_CONNECTION_ENV } from '../src/config/kafka-connection';
import { loadEnv } from '../src/config/load-env';
import {
  checkKafkaConnection,
  createKafkaClient,
  KafkaConnectionRefusedError,
  type KafkaClientOptions,
} from '../src/kafka';

// The connection variables against a real SASL_SSL listener (certificates and users made by the
// test): each SASL mechanism with the CA from a file and the password from a _FILE variable; a
// wrong password, a CA the broker's certificate is not signed by, and verification off.

const silent = pino({ level: 'silent' });
const SCHEMA = Type.Object(KAFKA_CONNECTION_ENV);

describe('Kafka connection security against a SASL_SSL broker', () => {
  let kafka: SecureKafka;
  let passwordFile: string;
  beforeAll(async () => {
    kafka = await startSecureKafka();
    passwordFile = join(kafka.caFile, '..', 'password');
    writeFileSync(passwordFile, `${kafka.users.relay}\n`);
  }, 180_000);
  afterAll(async () => {
    await kafka?.stop();
  });

  const connectionFor = (env: Record<string, string>) => {
    let connection: ReturnType<typeof kafkaConnectionFrom> | undefined;
    loadEnv(SCHEMA, env, (v, problems) => {
      connection = kafkaConnectionFrom(v, problems);
    });
    return connection;
  };
  const optionsFor = (env: Record<string, string>, logger = silent): KafkaClientOptions => ({
    clientId: uniqueName('secure'),
    brokers: kafka.brokers,
    connection: connectionFor(env),
    logger,
  });
  const clientFor = (env: Record<string, string>) => createKafkaClient(optionsFor(env));
  /** What a service's start check says with these variables: undefined when it lets the start go on. */
  const startCheck = async (env: Record<string, string>, logger = silent) => {
    const err = await checkKafkaConnection(optionsFor(env, logger)).then(
      () => undefined,
      (e: unknown) => e,
    );
    return { err };
  };
  const roundTrip = async (env: Record<string, string>) => {
    const client = clientFor(env);
    const topic = uniqueName('secure-topic');
    const admin = client.admin({ retry: { retries: 0 } });
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      const producer = client.producer();
      await producer.connect();
      await producer.send({ topic, messages: [{ key: 'k', value: 'over TLS' }] });
      await producer.disconnect();
      const [offsets] = await admin.fetchTopicOffsets(topic);
      return offsets!.high;
    } finally {
      await admin.disconnect();
    }
  };
  const sasl = (mechanism: string) => ({
    KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
    KAFKA_SSL_CA_FILE: kafka.caFile,
    KAFKA_SASL_MECHANISM: mechanism,
    KAFKA_SASL_USERNAME: 'relay',
    KAFKA_SASL_PASSWORD_FILE: passwordFile,
  });

  it.each(['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'])(
    'connects with %s: creates a topic, produces, reads offsets',
    async (m) => {
      expect(await roundTrip(sasl(m))).toBe('1');
    },
  );

  it('is refused with a wrong password', async () => {
    const env = { ...sasl('SCRAM-SHA-512'), KAFKA_SASL_PASSWORD: 'not-the-password-at-all' };
    delete (env as Record<string, string>).KAFKA_SASL_PASSWORD_FILE;
    await expect(roundTrip(env)).rejects.toThrow(/SASL SCRAM SHA512 authentication failed|Authentication failed/i);
  });

  it('refuses a broker certificate the CA does not sign (system CAs), unless verification is off', async () => {
    const env = { ...sasl('PLAIN') };
    delete (env as Record<string, string>).KAFKA_SSL_CA_FILE;
    await expect(roundTrip(env)).rejects.toThrow(/certificate|self.signed|unable to verify/i);
    expect(await roundTrip({ ...env, KAFKA_SSL_VERIFY: 'false' })).toBe('1');
  });

  it('the start check stops at once on a wrong password, naming the settings and not the secret', async () => {
    const wrong = 'not-the-password-at-all';
    const env = { ...sasl('SCRAM-SHA-512'), KAFKA_SASL_PASSWORD: wrong };
    delete (env as Record<string, string>).KAFKA_SASL_PASSWORD_FILE;
    const { err } = await startCheck(env);
    expect(err).toBeInstanceOf(KafkaConnectionRefusedError);
    expect(err).toMatchObject({ code: 'KAFKA_CONNECTION_REFUSED' });
    const message = (err as Error).message;
    expect(message).toMatch(
      /^Kafka refused the SASL credentials of KAFKA_SASL_USERNAME=relay with KAFKA_SASL_MECHANISM=SCRAM-SHA-512: check KAFKA_SASL_PASSWORD/,
    );
    expect(message).not.toContain(wrong);
  });

  it('the start check stops at once on a certificate no trusted CA signed, naming KAFKA_SSL_CA_FILE', async () => {
    const env = { ...sasl('PLAIN') };
    delete (env as Record<string, string>).KAFKA_SSL_CA_FILE;
    const lines: string[] = [];
    const { err } = await startCheck(env, pino({ level: 'debug' }, { write: (line: string) => lines.push(line) }));
    expect(err).toBeInstanceOf(KafkaConnectionRefusedError);
    // One connection attempt, not the client's minute of retries (kafkajs logs each failed one).
    expect(lines.filter((l) => l.includes('Failed to connect to seed broker'))).toHaveLength(1);
    expect((err as Error).message).toMatch(
      /^the broker's TLS certificate was not accepted \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\): check KAFKA_SSL_CA_FILE \(unset: only the system CAs are trusted\)/,
    );
  });

  it('the start check lets a good connection through', async () => {
    expect((await startCheck(sasl('SCRAM-SHA-256'))).err).toBeUndefined();
  });
});
