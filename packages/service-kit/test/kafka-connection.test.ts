import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { ConfigError } from '../src/errors';
import { kafkaConnectionFrom, kafkajsSecurity, KAFKA_CONNECTION_ENV } from '../src/config/kafka-connection';
import { loadEnv } from '../src/config/load-env';
import { connectionRefusal, connectionWarnings, KafkaConnectionRefusedError } from '../src/kafka';
import { KafkaJSConnectionError, KafkaJSNonRetriableError, KafkaJSSASLAuthenticationError } from 'kafkajs';

// The connection variables as a service reads them: every problem names its variable, no problem
// and no JSON of the connection quotes a secret, files are read as named.

const SCHEMA = Type.Object(KAFKA_CONNECTION_ENV);
const SECRET = 'correct-horse-battery-staple';

describe('Kafka connection settings', () => {
  let dir: string;
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kafka-connection-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** loadEnv with the connection refinement, as the services load it. */
  const load = (env: Record<string, string>) => {
    let connection: ReturnType<typeof kafkaConnectionFrom> | undefined;
    loadEnv(SCHEMA, env, (v, problems) => {
      connection = kafkaConnectionFrom(v, problems);
    });
    return connection!;
  };
  const problemsOf = (env: Record<string, string>): string[] => {
    try {
      load(env);
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).not.toContain(SECRET);
      return (err as ConfigError).message
        .split('\n')
        .slice(1)
        .map((l) => l.replace(/^\s*- /, ''));
    }
  };

  it('is PLAINTEXT by default: nothing for kafkajs', () => {
    const c = load({});
    expect(c.protocol).toBe('PLAINTEXT');
    expect(kafkajsSecurity(c)).toEqual({});
  });

  it('reads the CA, the client certificate and key, and the key passphrase from its file; verification stays on', () => {
    const c = load({
      KAFKA_SECURITY_PROTOCOL: 'SSL',
      KAFKA_SSL_CA_FILE: file('ca.pem', 'CA'),
      KAFKA_SSL_CERT_FILE: file('cert.pem', 'CERT'),
      KAFKA_SSL_KEY_FILE: file('key.pem', 'KEY'),
      KAFKA_SSL_KEY_PASSWORD_FILE: file('pass', `${SECRET}\n`),
    });
    expect(kafkajsSecurity(c)).toEqual({
      ssl: {
        ca: Buffer.from('CA'),
        cert: Buffer.from('CERT'),
        key: Buffer.from('KEY'),
        passphrase: SECRET,
        rejectUnauthorized: true,
      },
    });
    expect(JSON.stringify(c)).not.toContain(SECRET);
    expect(JSON.parse(JSON.stringify(c))).toEqual({
      protocol: 'SSL',
      ssl: { ca: join(dir, 'ca.pem'), clientCertificate: true, verify: true },
    });
  });

  it.each([
    ['SCRAM-SHA-512', 'scram-sha-512'],
    ['SCRAM-SHA-256', 'scram-sha-256'],
    ['PLAIN', 'plain'],
  ])('SASL_SSL with %s, the password from KAFKA_SASL_PASSWORD_FILE, system CAs', (mechanism, kafkajs) => {
    const c = load({
      KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      KAFKA_SASL_MECHANISM: mechanism,
      KAFKA_SASL_USERNAME: 'relay',
      KAFKA_SASL_PASSWORD_FILE: file('password', `${SECRET}\n`),
    });
    expect(kafkajsSecurity(c)).toEqual({
      ssl: { rejectUnauthorized: true },
      sasl: { mechanism: kafkajs, username: 'relay', password: SECRET },
    });
    expect(JSON.stringify(c)).not.toContain(SECRET);
  });

  // Issue 34 item 8: SASL PLAIN over SASL_PLAINTEXT was accepted silently.
  it('warns, without the password, when SASL PLAIN would send it in cleartext; not over TLS, not for SCRAM', () => {
    const sasl = { KAFKA_SASL_USERNAME: 'relay', KAFKA_SASL_PASSWORD: SECRET };
    const plain = connectionWarnings(
      load({ KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT', KAFKA_SASL_MECHANISM: 'PLAIN', ...sasl }),
    );
    expect(plain).toEqual([
      expect.stringMatching(/^KAFKA_SASL_MECHANISM=PLAIN over KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT: .*cleartext/),
    ]);
    expect(plain.join()).not.toContain(SECRET);
    expect(
      connectionWarnings(load({ KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SASL_MECHANISM: 'PLAIN', ...sasl })),
    ).toEqual([]);
    expect(
      connectionWarnings(
        load({ KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT', KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512', ...sasl }),
      ),
    ).toEqual([]);
    expect(connectionWarnings(load({}))).toEqual([]);
    expect(connectionWarnings(load({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_VERIFY: 'false' }))).toEqual([
      expect.stringMatching(/^KAFKA_SSL_VERIFY=false/),
    ]);
  });

  it('turns verification off only when asked (KAFKA_SSL_VERIFY=false)', () => {
    expect(kafkajsSecurity(load({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_VERIFY: 'false' }))).toEqual({
      ssl: { rejectUnauthorized: false },
    });
  });

  it('names every problem by its variable, without quoting a secret', () => {
    expect(
      problemsOf({
        KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
        KAFKA_SSL_CERT_FILE: file('cert.pem', 'CERT'),
        KAFKA_SSL_CA_FILE: join(dir, 'missing.pem'),
        KAFKA_SASL_PASSWORD: SECRET,
        KAFKA_SASL_PASSWORD_FILE: file('password', SECRET),
      }),
    ).toEqual([
      'KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together: set both or neither',
      `KAFKA_SSL_CA_FILE: cannot read ${join(dir, 'missing.pem')} (ENOENT)`,
      'KAFKA_SASL_PASSWORD and KAFKA_SASL_PASSWORD_FILE are both set: set one of them',
      'KAFKA_SASL_MECHANISM is required with KAFKA_SECURITY_PROTOCOL=SASL_SSL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)',
      'KAFKA_SASL_USERNAME is required with KAFKA_SECURITY_PROTOCOL=SASL_SSL',
    ]);
  });

  it('refuses TLS or SASL settings the protocol does not use, and an unknown protocol or mechanism', () => {
    expect(problemsOf({ KAFKA_SSL_CA_FILE: '/ca.pem', KAFKA_SASL_USERNAME: 'relay' })).toEqual([
      'KAFKA_SSL_CA_FILE is set, but KAFKA_SECURITY_PROTOCOL=PLAINTEXT does not use TLS',
      'KAFKA_SASL_USERNAME is set, but KAFKA_SECURITY_PROTOCOL=PLAINTEXT does not use SASL',
    ]);
    expect(problemsOf({ KAFKA_SECURITY_PROTOCOL: 'TLS' })[0]).toBe(
      'KAFKA_SECURITY_PROTOCOL must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL, got "TLS"',
    );
    expect(
      problemsOf({
        KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
        KAFKA_SASL_MECHANISM: 'GSSAPI',
        KAFKA_SASL_USERNAME: 'relay',
        KAFKA_SASL_PASSWORD: SECRET,
      })[0],
    ).toBe('KAFKA_SASL_MECHANISM must be one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, got "GSSAPI"');
  });

  it('requires a password, from the variable or its file', () => {
    expect(
      problemsOf({
        KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
        KAFKA_SASL_MECHANISM: 'PLAIN',
        KAFKA_SASL_USERNAME: 'u',
      }),
    ).toEqual([
      'KAFKA_SASL_PASSWORD (or KAFKA_SASL_PASSWORD_FILE) is required with KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT',
    ]);
  });
});

describe('connectionRefusal: the failures only the configuration can fix', () => {
  const sasl = { mechanism: 'SCRAM-SHA-512' as const, username: 'relay', password: SECRET };

  it('names the SASL settings, never the password, through kafkajs wrapping the refusal', () => {
    const refused = new KafkaJSSASLAuthenticationError('SASL SCRAM SHA512 authentication failed: bad credentials');
    const wrapped = new KafkaJSNonRetriableError(refused, { cause: refused });
    const err = connectionRefusal(wrapped, { sasl });
    expect(err).toBeInstanceOf(KafkaConnectionRefusedError);
    expect(err?.code).toBe('KAFKA_CONNECTION_REFUSED');
    expect(err?.message).toBe(
      'Kafka refused the SASL credentials of KAFKA_SASL_USERNAME=relay with KAFKA_SASL_MECHANISM=SCRAM-SHA-512: ' +
        'check KAFKA_SASL_PASSWORD (or the file KAFKA_SASL_PASSWORD_FILE names) and that the user exists on the brokers for that mechanism',
    );
    expect(err?.message).not.toContain(SECRET);
  });

  it.each(['SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID'])(
    'names KAFKA_SSL_CA_FILE for a certificate TLS refused (%s)',
    (code) => {
      const tls = new KafkaJSConnectionError(`Connection error: ${code}`, { broker: '127.0.0.1:9093', code });
      expect(connectionRefusal(tls, { caFile: '/run/secrets/ca.pem' })?.message).toBe(
        `the broker's TLS certificate was not accepted (${code}): check KAFKA_SSL_CA_FILE (now /run/secrets/ca.pem) ` +
          'and that the certificate names the host in KAFKA_BROKERS; KAFKA_SSL_VERIFY=false skips the check (never in production)',
      );
    },
  );

  it('leaves a broker that is down or slow to the retries', () => {
    const down = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9093', {
      code: 'ECONNREFUSED',
    });
    expect(connectionRefusal(down, { sasl })).toBeUndefined();
    expect(connectionRefusal(new KafkaJSConnectionError('Connection timeout'), { sasl })).toBeUndefined();
    expect(connectionRefusal(undefined, undefined)).toBeUndefined();
  });
});
