import { randomBytes } from 'node:crypto';
import type { Admin, Kafka } from 'kafkajs';
import {
  GenericContainer,
  getContainerRuntimeClient,
  Network,
  type StartedNetwork,
  type StartedTestContainer,
} from 'testcontainers';
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
  const network = await new Network().start();

  const builders = ids.map((id, i) => {
    const port = ports[i]!;
    return new GenericContainer(options.image ?? kafkaImage())
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
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'HOST:PLAINTEXT,INTERNAL:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT',
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
        ...options.environment,
      })
      .withLabels({ 'dev.state-relay.role': 'kafka', [KAFKA_CLUSTER_LABEL]: name })
      .withWaitStrategy(new NodeAnswers([`127.0.0.1:${port}`]).withStartupTimeout(startupTimeoutMs));
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
      await startNode(nodeOf(nodes, nodeId), startupTimeoutMs);
      await waitForBrokers(cluster.brokers, n, startupTimeoutMs);
    },
    stop: () => removeCluster(name, network),
  };
  if (failed) {
    await cluster.stop().catch(() => undefined);
    throw failed.reason;
  }
  try {
    await waitForBrokers(cluster.brokers, n, startupTimeoutMs);
  } catch (err) {
    await cluster.stop().catch(() => undefined);
    throw err;
  }
  return cluster;
}

type WaitedContainer = Parameters<BrokerAnswers['waitUntilReady']>[0];

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

async function startNode(node: KafkaClusterNode, timeoutMs: number): Promise<void> {
  const container = await dockerContainer(node);
  await container.start();
  await new NodeAnswers([node.broker]).withStartupTimeout(timeoutMs).waitUntilReady(container);
}

/** Until DescribeCluster, asked through any node, lists `count` brokers. */
async function waitForBrokers(brokers: string[], count: number, timeoutMs: number): Promise<void> {
  let seen = 0;
  await waitUntil(
    async () => {
      const admin = kafkaClient(brokers, 'testkit-cluster-probe').admin({ retry: { retries: 0 } });
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

/** The node id leading `topic`'s `partition`, from fresh metadata; -1 when it has none. */
export async function leaderOf(admin: Admin, topic: string, partition: number): Promise<number> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
  const found = topics[0]?.partitions.find((p) => p.partitionId === partition);
  if (!found) throw new Error(`no partition ${partition} of ${topic} in the metadata`);
  return found.leader;
}

/** The leader node id of each partition of `topic` (index = partition), from fresh metadata; -1 where there is none. */
export async function partitionLeaders(admin: Admin, topic: string): Promise<number[]> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
  const leaders: number[] = [];
  for (const p of topics[0]?.partitions ?? []) leaders[p.partitionId] = p.leader;
  return Array.from(leaders, (l) => l ?? -1);
}

/**
 * The node that leads the most of `leaders` (partition leaders, -1 for none); among equals one
 * other than `spare` if there is one (e.g. to kill a leader that is not also the coordinator), then the lowest id.
 */
export function busiestLeader(leaders: number[], spare?: number): number {
  const counts = new Map<number, number>();
  for (const l of leaders) if (l >= 0) counts.set(l, (counts.get(l) ?? 0) + 1);
  const top = [...counts].sort(
    (a, b) => b[1] - a[1] || Number(a[0] === spare) - Number(b[0] === spare) || a[0] - b[0],
  )[0];
  if (!top) throw new Error('no partition has a leader');
  return top[0];
}

/** The partitions of `topics` without a leader or with a replica out of the ISR now, as `topic/partition isr [..]`. */
export async function shortIsrs(admin: Admin, topics: string[]): Promise<string[]> {
  const { topics: meta } = await admin.fetchTopicMetadata({ topics });
  return meta.flatMap((t) =>
    t.partitions
      .filter((p) => p.leader < 0 || p.isr.length < p.replicas.length)
      .map((p) => `${t.name}/${p.partitionId} isr [${p.isr.join(',')}]`),
  );
}

/** The node id of the transaction coordinator of `transactionalId`, from a FindCoordinator request. */
export async function transactionCoordinatorOf(kafka: Kafka, transactionalId: string): Promise<number> {
  return findCoordinator(kafka, transactionalId, 'transaction');
}

/**
 * The node id of the group coordinator of `groupId`: the leader of the __consumer_offsets
 * partition the group maps to (abs(groupId.hashCode()) % partitions, as the broker computes
 * it). Through the admin's public API; transactionCoordinatorOf asks the broker instead.
 */
export async function groupCoordinatorOf(admin: Admin, groupId: string): Promise<number> {
  const { topics } = await admin.fetchTopicMetadata({ topics: ['__consumer_offsets'] });
  const partitions = topics[0]?.partitions ?? [];
  if (partitions.length === 0) throw new Error('__consumer_offsets has no partitions yet');
  return leaderOf(admin, '__consumer_offsets', partitionFor(groupId, partitions.length));
}

/** Kafka's Utils.abs(key.hashCode()) % partitions for a Java String. */
export function partitionFor(key: string, partitions: number): number {
  let hash = 0;
  for (let i = 0; i < key.length; i++) hash = (Math.imul(hash, 31) + key.charCodeAt(i)) | 0;
  const abs = hash === -2147483648 ? 0 : Math.abs(hash);
  return abs % partitions;
}

// kafkajs has no public FindCoordinator: its Cluster (made by the Kafka object's private
// createCluster, as admin() and producer() make theirs) asks it.
interface KafkajsCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  findGroupCoordinatorMetadata(args: {
    groupId: string;
    coordinatorType: number;
  }): Promise<{ coordinator: { nodeId: number } }>;
}

/** The node id a FindCoordinator request names for a group or a transactional id. */
export async function findCoordinator(kafka: Kafka, key: string, type: 'group' | 'transaction'): Promise<number> {
  const coordinatorType = type === 'group' ? 0 : 1;
  const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster');
  if (!symbol) throw new Error("this kafkajs has no private createCluster: FindCoordinator can't be sent");
  const createCluster = (kafka as unknown as Record<symbol, (o: object) => KafkajsCluster>)[symbol]!;
  const cluster = createCluster({});
  await cluster.connect();
  try {
    await cluster.refreshMetadata(); // the broker pool asks each known node in turn
    const { coordinator } = await cluster.findGroupCoordinatorMetadata({ groupId: key, coordinatorType });
    return coordinator.nodeId;
  } finally {
    await cluster.disconnect();
  }
}
