import { ConfigResourceTypes, type Admin } from 'kafkajs';
import { kafkaClient, testBrokers } from '../src';
import { createDeploymentTopics, newDeployment, PROCESSOR_TOPIC_LIMITS } from '../src/deployment';

// The bench seeds a deployment's topics before its processor starts: they must be what the
// processor's provisioning would create, or it warns that a topic takes smaller records.
describe("a deployment's topics on a real broker", () => {
  let admin: Admin;
  beforeAll(async () => {
    admin = kafkaClient(testBrokers()).admin();
    await admin.connect();
  });
  afterAll(async () => {
    await admin.disconnect();
  });

  it('are created with the partitions, compaction and record limits the processor would give them', async () => {
    const d = newDeployment('deployment-itest', 3);
    const extra = `${d.appId}-raw-out`;
    const topics = [d.eventsTopic, d.commandsTopic, d.changelogTopic, d.resultsTopic, d.deadLetterTopic, extra];
    await createDeploymentTopics(admin, d, [extra]);
    try {
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: topics.map((name) => ({
          type: ConfigResourceTypes.TOPIC,
          name,
          configNames: ['max.message.bytes', 'cleanup.policy'],
        })),
      });
      const configs = Object.fromEntries(
        resources.map((r) => [
          r.resourceName,
          Object.fromEntries(r.configEntries.map((e) => [e.configName, e.configValue])),
        ]),
      );
      const { topics: meta } = await admin.fetchTopicMetadata({ topics });
      const partitions = Object.fromEntries(meta.map((t) => [t.name, t.partitions.length]));
      const limit = String(PROCESSOR_TOPIC_LIMITS.topicMaxMessageBytes);
      expect({ configs, partitions }).toEqual({
        configs: {
          [d.eventsTopic]: { 'max.message.bytes': limit, 'cleanup.policy': 'delete' },
          [d.commandsTopic]: { 'max.message.bytes': limit, 'cleanup.policy': 'delete' },
          [d.changelogTopic]: { 'max.message.bytes': limit, 'cleanup.policy': 'compact' },
          [d.resultsTopic]: { 'max.message.bytes': limit, 'cleanup.policy': 'delete' },
          [d.deadLetterTopic]: {
            'max.message.bytes': String(PROCESSOR_TOPIC_LIMITS.deadLetterMaxMessageBytes),
            'cleanup.policy': 'delete',
          },
          // An extra topic takes the broker's defaults.
          [extra]: { 'max.message.bytes': limit, 'cleanup.policy': 'delete' },
        },
        partitions: {
          [d.eventsTopic]: 3,
          [d.commandsTopic]: 3,
          [d.changelogTopic]: 3,
          [d.resultsTopic]: 3,
          [d.deadLetterTopic]: 1,
          [extra]: 3,
        },
      });
    } finally {
      await admin.deleteTopics({ topics });
    }
  });
});
