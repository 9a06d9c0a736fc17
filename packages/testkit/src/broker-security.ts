import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { KafkaConfig } from 'kafkajs';

// The pieces a SASL_SSL broker needs, shared by startSecureKafka (one node) and
// startSecureKafkaCluster (three): a CA and broker certificates made by openssl, the listeners'
// SASL settings (PLAIN users in the JAAS line, SCRAM-SHA-256 / SCRAM-SHA-512 users in the cluster
// metadata, written when the node formats its storage), and how the readiness probe connects.

/** What a client on the host needs to reach a secured broker or cluster. */
export interface KafkaCredentials {
  /** The CA's certificate (PEM) as a file on the host: KAFKA_SSL_CA_FILE. */
  caFile: string;
  /** Users and their passwords, each valid for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512. */
  users: Record<string, string>;
}

/** A node's secured listeners: broker settings, files, the entrypoint, and how probes connect. */
export interface BrokerSecurity {
  protocol: 'SASL_SSL';
  environment: Record<string, string>;
  files: Array<{ content: Buffer; target: string }>;
  /** Replaces the image's entrypoint (which runs after it): formats storage with the SCRAM users. */
  entrypoint: string[];
  command: string[];
  client: Pick<KafkaConfig, 'ssl' | 'sasl'>;
}

const KEYSTORE = '/etc/kafka/secrets/broker.p12';
const KEYSTORE_PASSWORD = 'keystore-secret';
const SCRAM = ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
/** Where the nodes keep their data; set explicitly, the official image's default is under /tmp. */
const LOG_DIRS = '/var/lib/kafka/data';

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A self-signed CA in `dir` (ca.pem, ca.key); returns the certificate's path. */
export function makeTestCa(dir: string): string {
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
  return join(dir, 'ca.pem');
}

/** A certificate for `hosts` (DNS names or IP addresses; the first is the CN) signed by `dir`'s CA, as a PKCS12 keystore. */
function makeKeystore(dir: string, name: string, hosts: string[]): Buffer {
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${hosts[0]}`,
  ]);
  const names = hosts.map((h) => (isIP(h) ? `IP:${h}` : `DNS:${h}`)).join(',');
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${names}\n`);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  ]);
  openssl(dir, [
    'pkcs12',
    '-export',
    '-in',
    `${name}.pem`,
    '-inkey',
    `${name}.key`,
    '-certfile',
    'ca.pem',
    '-name',
    name,
    '-out',
    `${name}.p12`,
    '-passout',
    `pass:${KEYSTORE_PASSWORD}`,
  ]);
  return readFileSync(join(dir, `${name}.p12`));
}

/**
 * SASL_SSL on `listeners` (e.g. HOST) of one node: its certificate for `hosts` signed by the CA
 * already in `dir` (makeTestCa), PLAIN users in each listener's JAAS line, SCRAM users written
 * into the metadata at format time. Other listeners keep their own protocol.
 */
export function brokerSecurity(options: {
  dir: string;
  /** Names the keystore file in `dir`. */
  name: string;
  hosts: string[];
  listeners: string[];
  users: Record<string, string>;
}): BrokerSecurity {
  const { dir, users } = options;
  for (const [name, password] of Object.entries(users)) {
    // --add-scram's value is a bracketed list: these would end or split it.
    if (!/^[\w.-]+$/.test(name) || !/^[\w.-]+$/.test(password))
      throw new Error(`test user names and passwords take letters, digits, '.', '_' and '-' only (user ${name})`);
  }
  const plainUsers = Object.entries(users)
    .map(([name, password]) => `user_${name}="${password}"`)
    .join(' ');
  const environment: Record<string, string> = {
    KAFKA_SASL_ENABLED_MECHANISMS: ['PLAIN', ...SCRAM].join(','),
    KAFKA_SSL_KEYSTORE_LOCATION: KEYSTORE,
    KAFKA_SSL_KEYSTORE_TYPE: 'PKCS12',
    KAFKA_SSL_KEYSTORE_PASSWORD: KEYSTORE_PASSWORD,
    KAFKA_SSL_KEY_PASSWORD: KEYSTORE_PASSWORD,
    KAFKA_LOG_DIRS: LOG_DIRS,
  };
  for (const listener of options.listeners) {
    const prefix = `KAFKA_LISTENER_NAME_${listener}`;
    environment[`${prefix}_PLAIN_SASL_JAAS_CONFIG`] =
      `org.apache.kafka.common.security.plain.PlainLoginModule required ${plainUsers};`;
    for (const mechanism of SCRAM) {
      environment[`${prefix}_${mechanism.replace(/-/g, '___')}_SASL_JAAS_CONFIG`] =
        'org.apache.kafka.common.security.scram.ScramLoginModule required;';
    }
  }
  const [probeUser, probePassword] = Object.entries(users)[0]!;
  return {
    protocol: 'SASL_SSL',
    environment,
    files: [{ content: makeKeystore(dir, options.name, options.hosts), target: KEYSTORE }],
    ...formatWithScram(users),
    client: {
      ssl: { ca: [readFileSync(join(dir, 'ca.pem'))] },
      sasl: { mechanism: 'scram-sha-512', username: probeUser, password: probePassword },
    },
  };
}

/**
 * SCRAM credentials live in the cluster metadata; `kafka-storage format --add-scram` writes them
 * into every node's bootstrap metadata, so they exist before the first client connects. This
 * formats the storage with them, then runs the image's own entrypoint, whose format finds the
 * directory formatted and goes on (ours: --ignore-formatted; the official image tolerates
 * "already formatted"). The properties here are only what formatting reads: the node, the quorum
 * and the log directory, from the container's own environment.
 */
function formatWithScram(users: Record<string, string>): Pick<BrokerSecurity, 'entrypoint' | 'command'> {
  const script = [
    'set -e',
    'props=/tmp/format-scram.properties',
    `printf '%s\\n' process.roles=broker,controller "node.id=$KAFKA_NODE_ID" "controller.quorum.voters=$KAFKA_CONTROLLER_QUORUM_VOTERS" controller.listener.names=CONTROLLER listeners=BROKER://:29092,CONTROLLER://:9093 advertised.listeners=BROKER://localhost:29092 listener.security.protocol.map=BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT inter.broker.listener.name=BROKER "log.dirs=$KAFKA_LOG_DIRS" >"$props"`,
    // StorageTool is kafka.tools.StorageTool on 3.9 and 4.x; a local image built before
    // images/kafka/bin existed has no kafka-run-class.sh, only the jars.
    'if [ -x /opt/kafka/bin/kafka-run-class.sh ]; then run() { /opt/kafka/bin/kafka-run-class.sh "$@"; }',
    'else run() { java -cp \'/opt/kafka/libs/*\' "$@"; }; fi',
    'run kafka.tools.StorageTool format --ignore-formatted -t "$CLUSTER_ID" -c "$props" "$@"',
    'exec /etc/kafka/docker/run',
  ].join('\n');
  const scram = Object.entries(users).flatMap(([name, password]) =>
    SCRAM.flatMap((mechanism) => ['--add-scram', `${mechanism}=[name=${name},password=${password}]`]),
  );
  return { entrypoint: ['sh', '-c', script], command: ['format-with-scram', ...scram] };
}
