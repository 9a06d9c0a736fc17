import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StartedNetwork } from 'testcontainers';
import { startKafka, type StartedKafka } from './kafka-container';

// A broker whose host listener is SASL_SSL, with certificates made here by openssl: a CA, the
// broker's certificate for 127.0.0.1 / localhost signed by it (in a PKCS12 keystore), users for
// PLAIN (in the listener's JAAS line) and SCRAM-SHA-256 / SCRAM-SHA-512 (created through the
// broker's own ConfigCommand once it runs). Other containers reach it in plain text, as startKafka.

export interface SecureKafka extends StartedKafka {
  /** The CA's certificate (PEM) as a file on the host: KAFKA_SSL_CA_FILE. */
  caFile: string;
  /** Users and their passwords, each valid for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512. */
  users: Record<string, string>;
}

const KEYSTORE = '/etc/kafka/secrets/broker.p12';
const SCRAM = ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
const CONFIGS = '/opt/kafka/bin/kafka-configs.sh';

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA and a broker certificate for 127.0.0.1 and localhost, the keystore in PKCS12. */
function makeCertificates(dir: string, password: string): { ca: string; keystore: Buffer } {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=state-relay test CA',
  ]);
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'broker.key',
    '-out',
    'broker.csr',
    '-subj',
    '/CN=localhost',
  ]);
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'broker.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'broker.pem',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  ]);
  openssl(dir, [
    'pkcs12',
    '-export',
    '-in',
    'broker.pem',
    '-inkey',
    'broker.key',
    '-certfile',
    'ca.pem',
    '-name',
    'broker',
    '-out',
    'broker.p12',
    '-passout',
    `pass:${password}`,
  ]);
  return { ca: join(dir, 'ca.pem'), keystore: readFileSync(join(dir, 'broker.p12')) };
}

export async function startSecureKafka(
  options: { network?: StartedNetwork; alias?: string; users?: Record<string, string> } = {},
): Promise<SecureKafka> {
  const users = options.users ?? { relay: 'relay-secret-0123456789' };
  const dir = mkdtempSync(join(tmpdir(), 'secure-kafka-'));
  const storePassword = 'keystore-secret';
  const { ca, keystore } = makeCertificates(dir, storePassword);
  const [probeUser, probePassword] = Object.entries(users)[0]!;
  const plainUsers = Object.entries(users)
    .map(([name, password]) => `user_${name}="${password}"`)
    .join(' ');
  const started = await startKafka({
    ...(options.network && { network: options.network }),
    ...(options.alias && { alias: options.alias }),
    hostListener: {
      protocol: 'SASL_SSL',
      environment: {
        KAFKA_SASL_ENABLED_MECHANISMS: ['PLAIN', ...SCRAM].join(','),
        KAFKA_LISTENER_NAME_HOST_PLAIN_SASL_JAAS_CONFIG: `org.apache.kafka.common.security.plain.PlainLoginModule required ${plainUsers};`,
        KAFKA_LISTENER_NAME_HOST_SCRAM___SHA___256_SASL_JAAS_CONFIG:
          'org.apache.kafka.common.security.scram.ScramLoginModule required;',
        KAFKA_LISTENER_NAME_HOST_SCRAM___SHA___512_SASL_JAAS_CONFIG:
          'org.apache.kafka.common.security.scram.ScramLoginModule required;',
        KAFKA_SSL_KEYSTORE_LOCATION: KEYSTORE,
        KAFKA_SSL_KEYSTORE_TYPE: 'PKCS12',
        KAFKA_SSL_KEYSTORE_PASSWORD: storePassword,
        KAFKA_SSL_KEY_PASSWORD: storePassword,
      },
      files: [{ content: keystore, target: KEYSTORE }],
      client: {
        ssl: { ca: [readFileSync(ca)] },
        sasl: { mechanism: 'plain', username: probeUser, password: probePassword },
      },
    },
  });
  // SCRAM credentials live in the cluster metadata: set them through the plain-text listener.
  // One mechanism per request: the broker refuses two changes of one user's credentials in one.
  // kafka-configs.sh is in the official images and in ours; ConfigCommand's class moved in Kafka
  // 4.0 (kafka.admin -> org.apache.kafka.tools), and a local 3.9 image built before the script
  // was added has only the old class.
  for (const [name, password] of Object.entries(users)) {
    for (const mechanism of SCRAM) {
      const args = `--bootstrap-server localhost:29092 --alter --add-config '${mechanism}=[iterations=4096,password=${password}]' --entity-type users --entity-name ${name}`;
      const result = await started.container.exec([
        'sh',
        '-c',
        `if [ -x ${CONFIGS} ]; then ${CONFIGS} ${args}; else java -cp '/opt/kafka/libs/*' kafka.admin.ConfigCommand ${args}; fi`,
      ]);
      if (result.exitCode !== 0) throw new Error(`creating the ${mechanism} user ${name} failed: ${result.output}`);
    }
  }
  return {
    ...started,
    caFile: ca,
    users,
    stop: async () => {
      await started.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
