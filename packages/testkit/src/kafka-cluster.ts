import { randomBytes } from 'node:crypto';
import type { KafkaConfig } from 'kafkajs';
import {
  GenericContainer,
  getContainerRuntimeClient,
  Network,
  type StartedNetwork,
  type StartedTestContainer,
} from 'testcontainers';
import type { BrokerSecurity } from './broker-security';
import { freePort } from './free-port';
import { kafkaImage } from './images';
import { kafkaClient } from './kafka';
import { BrokerAnswers } from './kafka-container';
import { waitUntil } from './wait';

/** Every container of a cluster carries this label, valued with the cluster's name. */
export const KAFKA_CLUSTER_LABEL = 'dev.state-relay.kafka-cluster';

export interface KafkaClusterOptions {
  /** Number of nodes, each broker and controller (combined mode); 3 by default. */
  brokers?: number;
  image?: string;
  /** More broker properties as KAFKA_* variables, for every node. */
  environment?: Record<string, string>;
  /** How long the nodes may take to form the quorum and answer; 180 s by default. */
  startupTimeoutMs?: number;
  /** Secures the client listeners, HOST and INTERNAL, of each node (startSecureKafkaCluster); plain text by default. */
  security?: (node: { nodeId: number; alias: string }) => BrokerSecurity;
}

export interface KafkaClusterNode {
  /** node.id, 1..n; the container is `kafka-<nodeId>` on the cluster's network. */
  nodeId: number;
  /** 127.0.0.1:<port>, the same port number inside the container and on the host. */
  broker: string;
  internalBroker: string;
  container: StartedTestContainer;
}

export interface StartedKafkaCluster {
  /** The name in every container's KAFKA_CLUSTER_LABEL label. */
  name: string;
  /** Bootstrap servers for clients on the host, one per node. */
  brokers: string[];
  /** Bootstrap servers for containers on `network`. */
  internalBrokers: string[];
  network: StartedNetwork;
  nodes: KafkaClusterNode[];
  /**
   * kill -9 of the node's broker: the runtime's kill with SIGKILL (POST /containers/{id}/kill),
   * no SIGTERM first, so no shutdown code runs. The container stays, stopped, with its data.
   */
  kill(nodeId: number): Promise<void>;
  /** Starts a killed node's container again (same container: same host port, same log dirs); resolves when it answers and is listed again. */
  start(nodeId: number): Promise<void>;
  /** Removes every container and the network. */
  stop(): Promise<void>;
}

/**
 * A KRaft cluster of `brokers` nodes in combined mode on a network of its own. Internal topics
 * and new topics get replication factor 3 (fewer nodes: all of them) and min.insync.replicas 2.
 */
export async function startKafkaCluster(options: KafkaClusterOptions = {}): Promise<StartedKafkaCluster> {
  const n = options.brokers ?? 3;
  if (!Number.isInteger(n) || n < 1) throw new Error(`brokers must be a positive integer, got ${n}`);
  const rf = Math.min(3, n);
  const minIsr = Math.min(2, rf);
  const startupTimeoutMs = options.startupTimeoutMs ?? 180_000;
  const name = `kc-${randomBytes(4).toString('hex')}`;
  // Kafka's cluster id: 16 random bytes, base64url without padding.
  // Not starting with '-', which StorageTool's `-t` would take for an option.
  const clusterId = `A${randomBytes(16).toString('base64url').slice(1)}`;
  const ids = Array.from({ length: n }, (_, i) => i + 1);
  const ports: number[] = [];
  while (ports.length < n) {
    const port = await freePort();
    if (!ports.includes(port)) ports.push(port);
  }
  const alias = (id: number) => `kafka-${id}`;
  const voters = ids.map((id) => `${id}@${alias(id)}:9093`).join(',');
  const security = ids.map((id) => options.security?.({ nodeId: id, alias: alias(id) }));
  const client: ClientSecurity = security[0]?.client ?? {};
  const clientProtocol = security[0]?.protocol ?? 'PLAINTEXT';
  const network = await new Network().start();

  const builders = ids.map((id, i) => {
    const port = ports[i]!;
    const secured = security[i];
    const builder = new GenericContainer(options.image ?? kafkaImage())
      .withName(`${name}-${alias(id)}`)
      .withNetwork(network)
      .withNetworkAliases(alias(id))
      .withExposedPorts({ container: port, host: port })
      .withEnvironment({
        CLUSTER_ID: clusterId,
        KAFKA_NODE_ID: String(id),
        KAFKA_PROCESS_ROLES: 'broker,controller',
        KAFKA_LISTENERS: `HOST://:${port},INTERNAL://:19092,BROKER://:29092,CONTROLLER://:9093`,
        KAFKA_ADVERTISED_LISTENERS: `HOST://127.0.0.1:${port},INTERNAL://${alias(id)}:19092,BROKER://${alias(id)}:29092`,
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: `HOST:${clientProtocol},INTERNAL:${clientProtocol},BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT`,
        KAFKA_INTER_BROKER_LISTENER_NAME: 'BROKER',
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        KAFKA_CONTROLLER_QUORUM_VOTERS: voters,
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: String(rf),
        KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '4',
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: String(rf),
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: String(minIsr),
        KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS: '4',
        KAFKA_DEFAULT_REPLICATION_FACTOR: String(rf),
        KAFKA_MIN_INSYNC_REPLICAS: String(minIsr),
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
        // As startKafka: a crashed transactional producer's transaction is aborted after this
        // long unless a restarted one fences it; expired ones are aborted within a second.
        KAFKA_TRANSACTION_MAX_TIMEOUT_MS: '900000',
        KAFKA_TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS: '1000',
        KAFKA_LOG_CLEANER_BACKOFF_MS: '2000',
        // A killed replica leaves the ISR after 10 s without fetching (Kafka's default is 30 s).
        KAFKA_REPLICA_LAG_TIME_MAX_MS: '10000',
        KAFKA_HEAP_OPTS: '-Xms256m -Xmx512m',
        ...secured?.environment,
        ...options.environment,
      })
      .withLabels({ 'dev.state-relay.role': 'kafka', [KAFKA_CLUSTER_LABEL]: name })
      .withWaitStrategy(new NodeAnswers([`127.0.0.1:${port}`], client).withStartupTimeout(startupTimeoutMs));
    return secured
      ? builder
          .withCopyContentToContainer(secured.files)
          .withEntrypoint(secured.entrypoint)
          .withCommand(secured.command)
      : builder;
  });

  // Concurrently: a node does not answer before a quorum of controllers runs.
  const started = await Promise.allSettled(builders.map((b) => b.start()));
  const containers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  const nodes: KafkaClusterNode[] = containers.map((container, i) => ({
    nodeId: ids[i]!,
    broker: `127.0.0.1:${ports[i]}`,
    internalBroker: `${alias(ids[i]!)}:19092`,
    container,
  }));
  const cluster: StartedKafkaCluster = {
    name,
    brokers: nodes.map((node) => node.broker),
    internalBrokers: nodes.map((node) => node.internalBroker),
    network,
    nodes,
    kill: (nodeId) => killNode(nodeOf(nodes, nodeId)),
    start: async (nodeId) => {
      await startNode(nodeOf(nodes, nodeId), client, startupTimeoutMs);
      await waitForBrokers(cluster.brokers, client, n, startupTimeoutMs);
    },
    stop: () => removeCluster(name, network),
  };
  if (failed) {
    await cluster.stop().catch(() => undefined);
    throw failed.reason;
  }
  try {
    await waitForBrokers(cluster.brokers, client, n, startupTimeoutMs);
  } catch (err) {
    await cluster.stop().catch(() => undefined);
    throw err;
  }
  return cluster;
}

type WaitedContainer = Parameters<BrokerAnswers['waitUntilReady']>[0];
type ClientSecurity = Pick<KafkaConfig, 'ssl' | 'sasl'>;

/** BrokerAnswers, and when it fails the end of the node's log in the error: Testcontainers removes a container whose wait failed. */
class NodeAnswers extends BrokerAnswers {
  override async waitUntilReady(container: WaitedContainer): Promise<void> {
    try {
      await super.waitUntilReady(container);
    } catch (err) {
      const log = await container
        .logs({ stdout: true, stderr: true, follow: false, tail: 40 })
        .then((b) => demux(b as unknown as Buffer))
        .catch((e: Error) => `(no log: ${e.message})`);
      (err as Error).message += `\n--- the node's log, last lines ---\n${log}`;
      throw err;
    }
  }
}

/** The text of a non-TTY log stream (8-byte frame headers before each chunk). */
function demux(buffer: Buffer): string {
  const parts: Buffer[] = [];
  let at = 0;
  while (at + 8 <= buffer.length && buffer[at]! <= 2 && buffer.readUInt16BE(at + 1) === 0) {
    const size = buffer.readUInt32BE(at + 4);
    parts.push(buffer.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return parts.length > 0 ? Buffer.concat(parts).toString('utf8') : buffer.toString('utf8');
}

function nodeOf(nodes: KafkaClusterNode[], nodeId: number): KafkaClusterNode {
  const node = nodes.find((x) => x.nodeId === nodeId);
  if (!node) throw new Error(`no node ${nodeId} in the cluster (nodes ${nodes.map((x) => x.nodeId).join(', ')})`);
  return node;
}

type RuntimeContainer = ReturnType<Awaited<ReturnType<typeof getContainerRuntimeClient>>['container']['getById']>;

async function dockerContainer(node: KafkaClusterNode): Promise<RuntimeContainer> {
  const client = await getContainerRuntimeClient();
  return client.container.getById(node.container.getId());
}

async function killNode(node: KafkaClusterNode): Promise<void> {
  const container = await dockerContainer(node);
  await container.kill({ signal: 'SIGKILL' });
  await waitUntil(async () => !(await container.inspect()).State.Running, {
    timeoutMs: 30_000,
    intervalMs: 100,
    message: `node ${node.nodeId}'s container to stop after SIGKILL`,
  });
}

async function startNode(node: KafkaClusterNode, client: ClientSecurity, timeoutMs: number): Promise<void> {
  const container = await dockerContainer(node);
  await container.start();
  await new NodeAnswers([node.broker], client).withStartupTimeout(timeoutMs).waitUntilReady(container);
}

/** Until DescribeCluster, asked through any node, lists `count` brokers. */
async function waitForBrokers(
  brokers: string[],
  client: ClientSecurity,
  count: number,
  timeoutMs: number,
): Promise<void> {
  let seen = 0;
  await waitUntil(
    async () => {
      const admin = kafkaClient(brokers, 'testkit-cluster-probe', client).admin({ retry: { retries: 0 } });
      try {
        await admin.connect();
        seen = (await admin.describeCluster()).brokers.length;
        return seen >= count;
      } catch {
        return false;
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
    },
    { timeoutMs, intervalMs: 500, message: `${count} brokers in the cluster description (last seen ${seen})` },
  );
}

/** Removes the cluster's containers (found by label, running or not) and then its network. */
async function removeCluster(name: string, network: StartedNetwork): Promise<void> {
  const client = await getContainerRuntimeClient();
  const listed = await client.container.dockerode.listContainers({
    all: true,
    filters: { label: [`${KAFKA_CLUSTER_LABEL}=${name}`] },
  });
  await Promise.all(
    listed.map(async ({ Id }) => {
      const container = client.container.getById(Id);
      // A container killed mid-run can refuse the first removal ("container state improper").
      for (let attempt = 1; ; attempt++) {
        try {
          await container.remove({ force: true, v: true });
          return;
        } catch (err) {
          if ((err as { statusCode?: number }).statusCode === 404) return;
          if (attempt >= 3) throw err;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    }),
  );
  await network.stop();
}
