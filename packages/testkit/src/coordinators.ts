import type { Admin, Kafka } from 'kafkajs';

// Which node leads a partition or coordinates a group or a transactional id: what a fault test
// needs to pick the broker to kill on startKafkaCluster's nodes.

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
