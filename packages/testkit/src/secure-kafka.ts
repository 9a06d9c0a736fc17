import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StartedNetwork } from 'testcontainers';
import { brokerSecurity, makeTestCa, type KafkaCredentials } from './broker-security';
import { startKafkaCluster, type KafkaClusterOptions, type StartedKafkaCluster } from './kafka-cluster';
import { startKafka, type StartedKafka } from './kafka-container';

// Secured brokers: client listeners take SASL_SSL only, with certificates made here by openssl
// and users valid for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (see broker-security.ts). Both
// results carry the same connection details (brokers, internalBrokers, caFile, users).

export type { KafkaCredentials } from './broker-security';

export interface SecureKafka extends StartedKafka, KafkaCredentials {}

export interface SecureKafkaCluster extends StartedKafkaCluster, KafkaCredentials {}

const DEFAULT_USERS = { relay: 'relay-secret-0123456789' };

/**
 * One broker whose host listener is SASL_SSL, its certificate for 127.0.0.1 / localhost. Other
 * containers on `network` reach it in plain text, as startKafka.
 */
export function startSecureKafka(
  options: { network?: StartedNetwork; alias?: string; users?: Record<string, string> } = {},
): Promise<SecureKafka> {
  const users = options.users ?? DEFAULT_USERS;
  return withCertificates('secure-kafka-', users, (dir) =>
    startKafka({
      ...(options.network && { network: options.network }),
      ...(options.alias && { alias: options.alias }),
      hostListener: brokerSecurity({
        dir,
        name: 'broker',
        hosts: ['localhost', '127.0.0.1'],
        listeners: ['HOST'],
        users,
      }),
    }),
  );
}

/**
 * startKafkaCluster (three nodes, RF 3, min.insync.replicas 2) with both client listeners on
 * SASL_SSL: HOST (127.0.0.1:<port>, from the host) and INTERNAL (kafka-<n>:19092, on the
 * network); each node's certificate names 127.0.0.1, localhost and kafka-<n>. Brokers talk to
 * each other in plain text on the cluster's own network.
 */
export function startSecureKafkaCluster(
  options: Omit<KafkaClusterOptions, 'security'> & { users?: Record<string, string> } = {},
): Promise<SecureKafkaCluster> {
  const { users = DEFAULT_USERS, ...clusterOptions } = options;
  return withCertificates('secure-kafka-cluster-', users, (dir) =>
    startKafkaCluster({
      ...clusterOptions,
      security: ({ alias }) =>
        brokerSecurity({
          dir,
          name: alias,
          hosts: [alias, 'localhost', '127.0.0.1'],
          listeners: ['HOST', 'INTERNAL'],
          users,
        }),
    }),
  );
}

/** Starts what `start` makes with a fresh CA in a directory of its own, removed when it stops (or fails to start). */
async function withCertificates<T extends { stop(): Promise<void> }>(
  prefix: string,
  users: Record<string, string>,
  start: (dir: string) => Promise<T>,
): Promise<T & KafkaCredentials> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    const caFile = makeTestCa(dir);
    const started = await start(dir);
    return { ...started, caFile, users, stop: () => started.stop().finally(remove) };
  } catch (err) {
    remove();
    throw err;
  }
}
