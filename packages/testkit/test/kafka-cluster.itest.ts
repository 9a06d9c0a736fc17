import type { Admin, Kafka, Producer } from 'kafkajs';
import { getContainerRuntimeClient } from 'testcontainers';
import {
  findCoordinator,
  groupCoordinatorOf,
  KAFKA_CLUSTER_LABEL,
  kafkaClient,
  leaderOf,
  readTopic,
  startKafkaCluster,
  transactionCoordinatorOf,
  uniqueName,
  waitUntil,
  type StartedKafkaCluster,
} from '../src';

// The three-node KRaft cluster: a topic at RF 3 / min.insync.replicas 2 keeps taking acks=all
// transactional writes across a kill -9 of its leader, and the killed node rejoins the ISR.
describe('startKafkaCluster', () => {
  it('survives kill -9 of a partition leader, and the node rejoins the ISR; stop removes every container', async () => {
    const t0 = Date.now();
    const mark = (what: string) => process.stdout.write(`[cluster-test] +${Date.now() - t0} ms ${what}\n`);
    const cluster: StartedKafkaCluster = await startKafkaCluster({ brokers: 3 });
    mark(`3 nodes ready: ${cluster.brokers.join(',')}`);
    const admins: Admin[] = [];
    const producers: Producer[] = [];
    const adminOn = async (brokers: string[]) => {
      const admin = kafkaClient(brokers).admin();
      await admin.connect();
      admins.push(admin);
      return admin;
    };
    try {
      expect(cluster.brokers).toHaveLength(3);
      expect(cluster.internalBrokers).toEqual(['kafka-1:19092', 'kafka-2:19092', 'kafka-3:19092']);
      const kafka: Kafka = kafkaClient(cluster.brokers);
      const admin = await adminOn(cluster.brokers);
      expect((await admin.describeCluster()).brokers.map((b) => b.nodeId).sort()).toEqual([1, 2, 3]);

      const topic = uniqueName('cluster');
      await admin.createTopics({
        waitForLeaders: false,
        topics: [
          {
            topic,
            numPartitions: 1,
            replicationFactor: 3,
            configEntries: [{ name: 'min.insync.replicas', value: '2' }],
          },
        ],
      });
      const isrOf = async (a: Admin) =>
        (await a.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions[0]!.isr.slice().sort();
      await waitUntil(async () => (await isrOf(admin).catch(() => [])).length === 3, {
        timeoutMs: 60_000,
        message: `${topic} to have 3 in-sync replicas`,
      });

      const transactionalId = uniqueName('cluster-tx');
      const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
      producers.push(producer);
      await producer.connect();
      const write = async (value: string) => {
        const tx = await producer.transaction();
        await tx.send({ topic, acks: -1, messages: [{ key: 'k', value }] });
        await tx.commit();
      };
      await write('before');
      const coordinator = await transactionCoordinatorOf(kafka, transactionalId);
      expect([1, 2, 3]).toContain(coordinator);
      const group = uniqueName('cluster-group');
      // FindCoordinator for a group creates __consumer_offsets (RF 3) when it is not there yet.
      const found = await findCoordinator(kafka, group, 'group');
      let computed = -1;
      await waitUntil(
        async () => {
          computed = await groupCoordinatorOf(admin, group).catch(() => -1);
          return computed > 0;
        },
        { timeoutMs: 60_000, message: '__consumer_offsets to have leaders' },
      );
      expect(computed).toBe(found);

      const leader = await leaderOf(admin, topic, 0);
      mark(`leader of ${topic}-0 is node ${leader}; transaction coordinator ${coordinator}; killing node ${leader}`);
      await cluster.kill(leader);
      const others = cluster.nodes.filter((n) => n.nodeId !== leader).map((n) => n.broker);
      const survivor = await adminOn(others);
      let newLeader = -1;
      await waitUntil(
        async () => {
          newLeader = await leaderOf(survivor, topic, 0).catch(() => -1);
          return newLeader > 0 && newLeader !== leader;
        },
        { timeoutMs: 60_000, intervalMs: 250, message: `a leader other than ${leader} for ${topic}-0` },
      );
      mark(`new leader: node ${newLeader}`);
      await write('during');
      mark('a transactional write committed with the node down');
      expect(await isrOf(survivor)).not.toContain(leader);

      await cluster.start(leader);
      mark(`node ${leader} answers again`);
      await waitUntil(async () => (await isrOf(survivor).catch(() => [])).length === 3, {
        timeoutMs: 120_000,
        intervalMs: 500,
        message: `node ${leader} to rejoin the ISR of ${topic}-0`,
      });
      mark(`node ${leader} back in the ISR`);
      await write('after');
      const records = await readTopic(kafka, topic, { isolation: 'read_committed', timeoutMs: 60_000 });
      expect(records.map((r) => r.value)).toEqual(['before', 'during', 'after']);
    } finally {
      for (const p of producers) await p.disconnect().catch(() => undefined);
      for (const a of admins) await a.disconnect().catch(() => undefined);
      await cluster.stop();
      mark('cluster removed');
    }
    const client = await getContainerRuntimeClient();
    const left = await client.container.dockerode.listContainers({
      all: true,
      filters: { label: [`${KAFKA_CLUSTER_LABEL}=${cluster.name}`] },
    });
    expect(left).toEqual([]);
    const networks = await client.container.dockerode.listNetworks({ filters: { id: [cluster.network.getId()] } });
    expect(networks).toEqual([]);
  }, 900_000);
});
