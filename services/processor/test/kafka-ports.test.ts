import type { Consumer, Kafka } from 'kafkajs';
import { instancePorts, kafkaPorts } from '../src/tasks/kafka-ports';

// kafkajs throws from pause/resume/seek while a consumer is between runs (its own restart after a
// retriable crash, or a replacement not yet run); the ports skip those calls, since the next
// GROUP_JOIN re-applies pauses and seeks. Any other error still surfaces.

function portsWith(consumer: Partial<Consumer>, admin: object = {}) {
  return kafkaPorts({
    kafka: {} as Kafka,
    admin: admin as never,
    consumer: () => consumer as Consumer,
    appId: 'app',
    groupId: 'app',
    stateDir: '/tmp/unused',
    changelogTopic: 'changelog',
    inputTopics: ['events', 'commands'],
    transactionTimeoutMs: 60_000,
    requireStableOffsets: true,
  });
}

function kafkajsNotRunning(): Error {
  const err = new Error('Consumer group was not initialized, consumer#run must be called first');
  err.name = 'KafkaJSNonRetriableError';
  return err;
}

describe('kafka ports on a consumer between runs', () => {
  it('skips a pause, resume or seek kafkajs refuses because the consumer is not running', () => {
    const ports = portsWith({
      pause: () => {
        throw kafkajsNotRunning();
      },
      resume: () => {
        throw kafkajsNotRunning();
      },
      seek: () => {
        throw kafkajsNotRunning();
      },
    });
    expect(() => ports.pause(1)).not.toThrow();
    expect(() => ports.resume(1)).not.toThrow();
    expect(() => ports.seek('events', 1, '42')).not.toThrow();
  });

  it('passes the calls through to a running consumer, and lets any other error out', () => {
    const paused: unknown[] = [];
    const ports = portsWith({
      pause: (tp) => {
        paused.push(tp);
      },
      seek: () => {
        throw new Error('partition not assigned');
      },
    });
    ports.pause(2);
    expect(paused).toEqual([
      [
        { topic: 'events', partitions: [2] },
        { topic: 'commands', partitions: [2] },
      ],
    ]);
    expect(() => ports.seek('events', 2, '7')).toThrow('partition not assigned');
  });
});

describe('kafka ports reading committed offsets', () => {
  it('asks with require_stable and waits out UNSTABLE_OFFSET_COMMIT (a pending transaction holds them)', async () => {
    const asked: object[] = [];
    const admin = {
      fetchOffsets: async (request: object) => {
        asked.push(request);
        if (asked.length === 1) throw Object.assign(new Error('unstable'), { type: 'UNSTABLE_OFFSET_COMMIT' });
        return [
          { topic: 'events', partitions: [{ partition: 0, offset: '7' }] },
          { topic: 'commands', partitions: [{ partition: 0, offset: '-1' }] },
        ];
      },
      fetchTopicOffsets: async () => [{ partition: 0, low: '3', high: '9', offset: '9' }],
    };
    const committed = await portsWith({}, admin).committedOffsets();
    expect(asked).toEqual([
      { groupId: 'app', topics: ['events', 'commands'], requireStable: true },
      { groupId: 'app', topics: ['events', 'commands'], requireStable: true },
    ]);
    expect(committed.get('events')?.get(0)).toBe('7');
    expect(committed.get('commands')?.get(0)).toBe('3'); // none committed: the earliest offset
  });
});

describe('exactly-once v2 ports', () => {
  it('enter a task only after the instance producer is ready and a stable read of its own offsets', async () => {
    const steps: string[] = [];
    let release!: () => void;
    const stable = new Promise<void>((resolve) => (release = resolve));
    const base = portsWith({});
    const ports = instancePorts(
      {
        ...base,
        committedOffsets: async (tasks) => {
          steps.push(`offsets of ${tasks?.join(',')}`);
          await stable; // a pending transaction of an earlier owner
          steps.push('stable');
          return new Map();
        },
      },
      { ready: async () => void steps.push('producer ready') },
      async () => new Map(),
    );
    const entering = ports.initProducer(3);
    await new Promise((resolve) => setImmediate(resolve));
    expect(steps).toEqual(['producer ready', 'offsets of 3']);
    release();
    await expect(entering).resolves.toBeUndefined();
    expect(steps).toEqual(['producer ready', 'offsets of 3', 'stable']);
  });

  it("read the entering tasks' changelog ends once settled, the others as they are", async () => {
    const asked: Array<{ tasks: readonly number[]; ends: ReadonlyMap<number, bigint> }> = [];
    const ports = instancePorts(
      {
        ...portsWith({}),
        changelogEnds: async () =>
          new Map([
            [0, 10n],
            [1, 20n],
            [2, 30n],
          ]),
      },
      { ready: async () => undefined },
      async (tasks, ends) => {
        asked.push({ tasks, ends });
        return new Map([[1, 25n]]); // an earlier owner's markers landed meanwhile
      },
    );
    await expect(ports.changelogEnds([1])).resolves.toEqual(
      new Map([
        [0, 10n],
        [1, 25n],
        [2, 30n],
      ]),
    );
    expect(asked).toEqual([
      {
        tasks: [1],
        ends: new Map([
          [0, 10n],
          [1, 20n],
          [2, 30n],
        ]),
      },
    ]);
  });
});
