import { deploymentTopics, newDeployment } from '../src/deployment';

// test/repo/testkit-mirrors.test.ts pins these settings to the processor's own.
describe('a deployment', () => {
  it('names its app id from the prefix, uniquely, and its topics after the app id', () => {
    const d = newDeployment('bench-tput', 6);
    expect(d.appId).toMatch(/^bench-tput-/);
    expect(newDeployment('bench-tput', 6).appId).not.toBe(d.appId);
    expect(d).toEqual({
      appId: d.appId,
      eventsTopic: `${d.appId}-events`,
      commandsTopic: `${d.appId}-commands`,
      resultsTopic: `${d.appId}-results`,
      deadLetterTopic: `${d.appId}-dlq`,
      changelogTopic: `${d.appId}-accounts-changelog`,
      partitions: 6,
    });
  });

  it('creates its topics with the settings of the processor (partitions, a compacted changelog, record limits)', () => {
    const d = newDeployment('t', 3);
    const limit = { 'max.message.bytes': '1048588' };
    expect(deploymentTopics(d, ['extra-out'])).toEqual([
      { topic: 'extra-out', partitions: 3 },
      { topic: d.eventsTopic, partitions: 3, configs: limit },
      { topic: d.commandsTopic, partitions: 3, configs: limit },
      { topic: d.changelogTopic, partitions: 3, compacted: true, configs: limit },
      { topic: d.resultsTopic, partitions: 3, configs: limit },
      { topic: d.deadLetterTopic, partitions: 1, configs: { 'max.message.bytes': String(8 * 1_048_576) } },
    ]);
  });
});
