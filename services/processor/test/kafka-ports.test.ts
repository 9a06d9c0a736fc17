import type { Consumer, Kafka } from 'kafkajs';
import { instancePorts, kafkaPorts, stableEntryPorts } from '../src/tasks/kafka-ports';
import type { Producer } from 'kafkajs';

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
    expect(() => ports.pauseTopic('commands', 1)).not.toThrow();
    expect(() => ports.resumeTopic('commands', 1)).not.toThrow();
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

describe('kafka ports pausing one input of a task (the command share)', () => {
  it('pause and resume the named topic of the task only', () => {
    const calls: unknown[] = [];
    const ports = portsWith({
      pause: (tp) => void calls.push(['pause', tp]),
      resume: (tp) => void calls.push(['resume', tp]),
    });
    ports.pauseTopic('commands', 3);
    ports.resumeTopic('commands', 3);
    expect(calls).toEqual([
      ['pause', [{ topic: 'commands', partitions: [3] }]],
      ['resume', [{ topic: 'commands', partitions: [3] }]],
    ]);
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

  it("fence the entering task's legacy v1 transactional id, exactly that task's, before its stable read", async () => {
    const steps: string[] = [];
    const ports = instancePorts(
      {
        ...portsWith({}),
        committedOffsets: async (tasks) => {
          steps.push(`offsets of ${tasks?.join(',')}`);
          return new Map();
        },
      },
      { ready: async () => void steps.push('producer ready') },
      async () => new Map(),
      async (task) => void steps.push(`fence app-${task}`),
    );
    await ports.initProducer(3);
    await ports.initProducer(5);
    expect(steps).toEqual([
      'producer ready',
      'fence app-3',
      'offsets of 3',
      'producer ready',
      'fence app-5',
      'offsets of 5',
    ]);
  });

  it('fail the entry, before any read, when the legacy fence fails; without it (EXACTLY_ONCE_LEGACY_FENCE=false) read at once', async () => {
    const steps: string[] = [];
    const base = {
      ...portsWith({}),
      committedOffsets: async (tasks?: readonly number[]) => {
        steps.push(`offsets of ${tasks?.join(',')}`);
        return new Map<string, Map<number, string>>();
      },
    };
    const fenced = instancePorts(
      base,
      { ready: async () => undefined },
      async () => new Map(),
      async () => {
        throw Object.assign(new Error('not authorized (injected)'), { type: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED' });
      },
    );
    await expect(fenced.initProducer(2)).rejects.toThrow('not authorized');
    expect(steps).toEqual([]);
    const unfenced = instancePorts(base, { ready: async () => undefined }, async () => new Map());
    await unfenced.initProducer(2);
    expect(steps).toEqual(['offsets of 2']);
  });
});

describe('exactly-once v1 ports on a broker with KIP-447 (a group that may mix v1 and v2 instances)', () => {
  it("read the task's offsets stable after its own fence, and its changelog end settled", async () => {
    const steps: string[] = [];
    const producer = { disconnect: async () => void steps.push('disconnect') } as unknown as Producer;
    let unstable = true;
    const ports = stableEntryPorts(
      {
        ...portsWith({}),
        initProducer: async (task) => {
          steps.push(`fence app-${task}`);
          return producer;
        },
        committedOffsets: async (tasks) => {
          steps.push(`offsets of ${tasks?.join(',')}`);
          if (unstable) throw Object.assign(new Error('still unstable (injected)'), { retriable: true });
          return new Map();
        },
        changelogEnds: async () => new Map([[4, 10n]]),
      },
      async (tasks) => {
        steps.push(`settle ${tasks.join(',')}`);
        return new Map([[4, 12n]]); // a v2 owner's markers landed meanwhile
      },
    );
    await expect(ports.initProducer(4)).rejects.toThrow('still unstable');
    expect(steps).toEqual(['fence app-4', 'offsets of 4', 'disconnect']); // the fenced producer is not leaked
    steps.length = 0;
    unstable = false;
    await expect(ports.initProducer(4)).resolves.toBe(producer);
    await expect(ports.changelogEnds([4])).resolves.toEqual(new Map([[4, 12n]]));
    expect(steps).toEqual(['fence app-4', 'offsets of 4', 'settle 4']);
  });
});
