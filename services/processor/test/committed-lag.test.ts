import { createProcessorMetrics } from '../src/metrics';
import type { InputLag } from '../src/status/input-lag';
import { InputLagProbe } from '../src/status/input-lag';

// processor_committed_lag_records is read at scrape time from the input lag probe (end offset minus
// the group's committed offset), for the partitions the instance owns at that moment.

const lagOf = (partitions: number): InputLag[] =>
  Array.from({ length: partitions }, (_, p) => [
    { topic: 'events', partition: p, lag: 100 + p },
    { topic: 'commands', partition: p, lag: 10 + p },
  ]).flat();

/** The gauge's samples in one scrape of the whole registry, as `topic/partition value`. */
async function scrape(metrics: ReturnType<typeof createProcessorMetrics>): Promise<string[]> {
  const text = await metrics.registry.metrics();
  expect(text).toMatch(/^# TYPE processor_tasks gauge$/m); // the rest of the scrape is there
  return [...text.matchAll(/^processor_committed_lag_records\{topic="(\w+)",partition="(\d+)"\} (\d+)$/gm)]
    .map(([, topic, partition, value]) => `${topic}/${partition} ${value}`)
    .sort();
}

describe('processor_committed_lag_records', () => {
  it('has a series for each input partition this instance owns, and none for the others', async () => {
    const metrics = createProcessorMetrics();
    metrics.readCommittedLagFrom({ read: async () => lagOf(4), owned: () => [1, 3] });
    expect(await scrape(metrics)).toEqual(['commands/1 11', 'commands/3 13', 'events/1 101', 'events/3 103']);
  });

  it('follows each reading: a partition no longer owned leaves no stale series behind', async () => {
    const metrics = createProcessorMetrics();
    let owned = [0, 1];
    let lags = lagOf(2);
    metrics.readCommittedLagFrom({ read: async () => lags, owned: () => owned });
    expect(await scrape(metrics)).toEqual(['commands/0 10', 'commands/1 11', 'events/0 100', 'events/1 101']);
    owned = [1];
    lags = lags.map((l) => ({ ...l, lag: l.lag + 50 }));
    expect(await scrape(metrics)).toEqual(['commands/1 61', 'events/1 151']);
    owned = [];
    expect(await scrape(metrics)).toEqual([]);
  });

  it('is declared without series before the processor starts and after it stops', async () => {
    const metrics = createProcessorMetrics();
    expect(await metrics.registry.metrics()).toMatch(/^# TYPE processor_committed_lag_records gauge$/m);
    expect(await scrape(metrics)).toEqual([]);
    metrics.readCommittedLagFrom({ read: async () => lagOf(1), owned: () => [0] });
    expect(await scrape(metrics)).toHaveLength(2);
    metrics.readCommittedLagFrom(undefined);
    expect(await scrape(metrics)).toEqual([]);
  });

  it('drops its series, and the scrape still answers in time, while Kafka does not answer', async () => {
    const metrics = createProcessorMetrics();
    let answering = true;
    const admin = {
      fetchOffsets: async ({ topics }: { topics: string[] }) =>
        answering
          ? topics.map((topic) => ({ topic, partitions: [{ partition: 0, offset: '5', metadata: null }] }))
          : new Promise<never>(() => {}), // a black-holed connection
      fetchTopicOffsets: async () => [{ partition: 0, offset: '8', high: '8', low: '0' }],
    };
    const probe = new InputLagProbe({
      admin: admin as never, // the two calls the probe makes, not kafkajs's full signatures
      groupId: 'g',
      topics: ['events', 'commands'],
      cacheMs: 0,
      waitMs: 50,
    });
    metrics.readCommittedLagFrom({ read: () => probe.read(), owned: () => [0] });
    expect(await scrape(metrics)).toEqual(['commands/0 3', 'events/0 3']);

    answering = false;
    const started = Date.now();
    expect(await scrape(metrics)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(3_000); // bounded by waitMs (50 ms), not by Kafka

    // A source that fails outright is the same: no series, no failed scrape.
    metrics.readCommittedLagFrom({ read: () => Promise.reject(new Error('down')), owned: () => [0] });
    expect(await scrape(metrics)).toEqual([]);
  });
});
