import { createTopics, kafkaClient, testBrokers } from '@state-relay/testkit';
import type { Admin } from 'kafkajs';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { provisionTopics } from '../src/kafka/topics';
import { deploymentEnv, newDeployment, type Deployment } from './harness';

// Provisioning's topic settings against the broker: the replication factor and
// min.insync.replicas of the topics it creates, and TOPICS_CREATE=false, where it creates nothing
// and names what is missing or wrong.

const silent = pino({ level: 'silent' });

function configFor(d: Deployment, extra: Record<string, string> = {}) {
  return loadConfig({ ...deploymentEnv(d), ...extra });
}
const names = (d: Deployment) => [d.eventsTopic, d.commandsTopic, d.changelogTopic, d.resultsTopic, d.deadLetterTopic];

describe('topic provisioning against a real broker', () => {
  let admin: Admin;
  beforeAll(async () => {
    admin = kafkaClient(testBrokers()).admin();
    await admin.connect();
  });
  afterAll(async () => {
    await admin.disconnect();
  });

  const configOf = async (topic: string, name: string) => {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: 2, name: topic, configNames: [name] }],
    });
    return resources[0]!.configEntries.find((e) => e.configName === name)?.configValue;
  };

  it("creates the topics with the broker's default replication factor and the min.insync.replicas asked for", async () => {
    const d = newDeployment(testBrokers(), 2);
    await provisionTopics(admin, configFor(d, { TOPIC_MIN_INSYNC_REPLICAS: '1' }), silent);
    const meta = await admin.fetchTopicMetadata({ topics: names(d) });
    expect(meta.topics.map((t) => [t.name, t.partitions.length, t.partitions[0]!.replicas.length]).sort()).toEqual(
      [
        [d.eventsTopic, 2, 1],
        [d.commandsTopic, 2, 1],
        [d.changelogTopic, 2, 1],
        [d.resultsTopic, 2, 1],
        [d.deadLetterTopic, 1, 1],
      ].sort(),
    );
    for (const topic of names(d)) expect([topic, await configOf(topic, 'min.insync.replicas')]).toEqual([topic, '1']);
    expect(await configOf(d.changelogTopic, 'cleanup.policy')).toBe('compact');
  });

  it('with TOPICS_CREATE=false creates nothing and names every missing topic', async () => {
    const d = newDeployment(testBrokers(), 2);
    await createTopics(admin, [{ topic: d.eventsTopic, partitions: 2 }]);
    const err = await provisionTopics(admin, configFor(d, { TOPICS_CREATE: 'false' }), silent).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'TOPICS_NOT_AS_REQUIRED' });
    expect((err as Error).message).toBe(
      `TOPICS_CREATE=false and these topics do not exist: ${[d.commandsTopic, d.changelogTopic, d.resultsTopic, d.deadLetterTopic].join(', ')} (create them as the processor README's "Topics" says)`,
    );
    const existing = new Set(await admin.listTopics());
    expect(names(d).filter((t) => existing.has(t))).toEqual([d.eventsTopic]);
  });

  it('with TOPICS_CREATE=false names every problem of the existing topics in one error, and accepts topics made as required', async () => {
    const d = newDeployment(testBrokers(), 2);
    await createTopics(admin, [
      { topic: d.eventsTopic, partitions: 2 },
      { topic: d.commandsTopic, partitions: 3 },
      { topic: d.changelogTopic, partitions: 1 },
      { topic: d.resultsTopic, partitions: 2, configs: { 'max.message.bytes': '500000' } },
      { topic: d.deadLetterTopic, partitions: 1 },
    ]);
    const err = await provisionTopics(admin, configFor(d, { TOPICS_CREATE: 'false' }), silent).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'TOPICS_NOT_AS_REQUIRED' });
    expect((err as Error).message).toBe(
      'TOPICS_CREATE=false and the topics are not as the processor needs them: ' +
        [
          `changelog ${d.changelogTopic} must be compacted (cleanup.policy=compact), but its cleanup.policy is delete`,
          `inputs ${d.eventsTopic} (2 partitions) and ${d.commandsTopic} (3) must have as many partitions`,
          `changelog ${d.changelogTopic} must have as many partitions as ${d.eventsTopic} (2), but has 1`,
          `${d.resultsTopic} has max.message.bytes=500000, below the 1048588 the processor may produce to it`,
          `${d.deadLetterTopic} has max.message.bytes=1048588, below the 8388608 the processor may produce to it`,
        ].join('; '),
    );
    const ok = newDeployment(testBrokers(), 2);
    await createTopics(admin, [
      { topic: ok.eventsTopic, partitions: 2 },
      { topic: ok.commandsTopic, partitions: 2 },
      { topic: ok.changelogTopic, partitions: 2, compacted: true },
      { topic: ok.resultsTopic, partitions: 2 },
      { topic: ok.deadLetterTopic, partitions: 1, configs: { 'max.message.bytes': '8388608' } },
    ]);
    await expect(provisionTopics(admin, configFor(ok, { TOPICS_CREATE: 'false' }), silent)).resolves.toMatchObject({
      deleteRetentionMs: expect.any(Number),
    });
  });

  it('creating the topics (the default), an existing changelog that is not compacted is refused by itself', async () => {
    const d = newDeployment(testBrokers(), 2);
    await createTopics(admin, [{ topic: d.changelogTopic, partitions: 2 }]);
    await expect(provisionTopics(admin, configFor(d), silent)).rejects.toThrow(
      `changelog ${d.changelogTopic} must be compacted (cleanup.policy=compact), but its cleanup.policy is delete`,
    );
  });
});
