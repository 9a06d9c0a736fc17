import type { Producer, RecordMetadata, Transaction } from 'kafkajs';
import pino from 'pino';
import { TaskFailure } from '../src/tasks/errors';
import { InstanceCommitter, type CommitSource } from '../src/tasks/instance-commit';
import { commitUnits, type CommitPart } from '../src/tasks/transaction';
import { UnitOfWork } from '../src/tasks/unit-of-work';
import { createProcessorMetrics } from '../src/metrics';

// Exactly-once v2's commit cycle on fake producers (the broker's side is in processor.itest.ts and
// the v2 fault cases): what goes into the one transaction, and what each outcome leaves behind.

const topics = { changelog: 'changelog', results: 'results', deadLetter: 'dlq' };
const silent = pino({ level: 'silent' });

/** A unit of `task` that changed `key` and moved both inputs. */
function unitOf(key: string, events: bigint, commands: bigint): UnitOfWork {
  const unit = new UnitOfWork();
  unit.put(key, { version: 1, value: { key }, seen: '' }, Buffer.from(key));
  unit.offsets.set('events', events);
  unit.offsets.set('commands', commands);
  unit.records = 1;
  return unit;
}

interface Recorded {
  batches: Array<Array<{ topic: string; messages: Array<{ partition?: number }> }>>;
  offsets: unknown[];
  commits: number;
  aborts: number;
}

/** A producer whose transactions record what they get; `fail(step)` throws at that step. */
function fakeProducer(fail?: (step: 'sendOffsets' | 'commit') => unknown) {
  const rec: Recorded = { batches: [], offsets: [], commits: 0, aborts: 0 };
  let base = 100;
  const tx = {
    sendBatch: async ({ topicMessages }: { topicMessages: Recorded['batches'][number] }) => {
      rec.batches.push(topicMessages);
      const meta: RecordMetadata[] = [];
      for (const { topic, messages } of topicMessages) {
        for (const partition of new Set(messages.map((m) => m.partition!))) {
          meta.push({ topicName: topic, partition, errorCode: 0, baseOffset: String(base) });
          base += 10;
        }
      }
      return meta;
    },
    sendOffsets: async (o: unknown) => {
      rec.offsets.push(o);
      const err = fail?.('sendOffsets');
      if (err) throw err;
    },
    commit: async () => {
      const err = fail?.('commit');
      if (err) throw err;
      rec.commits++;
    },
    abort: async () => {
      rec.aborts++;
    },
  } as unknown as Transaction;
  const producer = {
    transaction: async () => tx,
    disconnect: async () => undefined,
  } as unknown as Producer;
  return { producer, rec };
}

const brokerError = (type: string) => Object.assign(new Error(type), { type });

describe('commitUnits (one transaction for several tasks)', () => {
  it("sends every part's changelog records to its own partition and commits every part's offsets with the membership", async () => {
    const { producer, rec } = fakeProducer();
    const parts: CommitPart[] = [
      {
        task: 0,
        unit: unitOf('a', 5n, 2n),
        inputs: new Map([
          ['events', 5n],
          ['commands', 2n],
        ]),
      },
      {
        task: 3,
        unit: unitOf('b', 9n, 1n),
        inputs: new Map([
          ['events', 9n],
          ['commands', 1n],
        ]),
      },
    ];
    const committed = await commitUnits(producer, parts, {
      groupId: 'g',
      topics,
      membership: { generationId: 7, memberId: 'm-1' },
    });
    expect(rec.batches).toHaveLength(1);
    expect(rec.batches[0]![0]!.messages.map((m) => m.partition)).toEqual([0, 3]);
    expect(rec.offsets).toEqual([
      {
        consumerGroupId: 'g',
        generationId: 7,
        memberId: 'm-1',
        topics: [
          {
            topic: 'events',
            partitions: [
              { partition: 0, offset: '5' },
              { partition: 3, offset: '9' },
            ],
          },
          {
            topic: 'commands',
            partitions: [
              { partition: 0, offset: '2' },
              { partition: 3, offset: '1' },
            ],
          },
        ],
      },
    ]);
    expect(rec.commits).toBe(1);
    // Each part's checkpoint: its partition's base offset plus its records (one each).
    expect(committed.map((c) => c.checkpoint)).toEqual(['101', '111']);
    expect(committed.map((c) => c.changes.map(([k]) => k))).toEqual([['a'], ['b']]);
  });
});

/** A source of due tasks for the committer: each due unit goes in through commit(). */
function sourceFor(committer: InstanceCommitter, due: () => CommitPart[]) {
  const outcomes: Array<Promise<unknown>> = [];
  const source: CommitSource = {
    commitDue: () => {
      for (const part of due())
        outcomes.push(
          committer.commit(part).then(
            (c) => ({ ok: c.checkpoint }),
            (err: TaskFailure) => ({ failed: err.kind }),
          ),
        );
    },
    membership: () => ({ generationId: 3, memberId: 'm' }),
  };
  return { source, outcomes };
}

function committerWith(producers: Array<ReturnType<typeof fakeProducer>>, onFenced = jest.fn()) {
  let made = 0;
  const metrics = createProcessorMetrics();
  const committer = new InstanceCommitter({
    createProducer: async () => producers[Math.min(made++, producers.length - 1)]!.producer,
    groupId: 'g',
    topics,
    intervalMs: 20,
    transactionTimeoutMs: 60_000,
    logger: silent,
    metrics,
    onFenced,
  });
  const made_ = () => made;
  return { committer, metrics, onFenced, made: made_ };
}

const count = async (metrics: ReturnType<typeof createProcessorMetrics>, outcome: string) =>
  (await metrics.instanceTransactions.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;

describe('InstanceCommitter', () => {
  const part = (task: number) => ({ task, unit: unitOf(`k${task}`, 1n, 1n), inputs: new Map([['events', 1n]]) });

  it('commits every due task in one transaction per cycle', async () => {
    const first = fakeProducer();
    const { committer, metrics } = committerWith([first]);
    const { source, outcomes } = sourceFor(committer, () => [part(0), part(1), part(2)]);
    await committer.start(source);
    committer.wake(false);
    await committer.idle();
    await new Promise((r) => setTimeout(r, 0));
    expect(await Promise.all(outcomes)).toEqual([{ ok: '101' }, { ok: '111' }, { ok: '121' }]);
    expect(first.rec.commits).toBe(1);
    expect(await count(metrics, 'committed')).toBe(1);
    await committer.stop();
  });

  it('aborts on a stale generation, fails every part as a commit failure, and keeps its producer', async () => {
    const stale = fakeProducer((step) => (step === 'sendOffsets' ? brokerError('ILLEGAL_GENERATION') : undefined));
    const { committer, metrics, made, onFenced } = committerWith([stale]);
    const { source, outcomes } = sourceFor(committer, () => [part(0), part(1)]);
    await committer.start(source);
    committer.wake(true);
    await committer.idle();
    expect(await Promise.all(outcomes)).toEqual([{ failed: 'commit' }, { failed: 'commit' }]);
    expect(stale.rec.aborts).toBe(1);
    expect(await count(metrics, 'stale-member')).toBe(1);
    expect(made()).toBe(1);
    expect(onFenced).not.toHaveBeenCalled();
    await committer.stop();
  });

  it('replaces its producer after a failure whose outcome is unknown', async () => {
    const broken = fakeProducer((step) => (step === 'commit' ? brokerError('REQUEST_TIMED_OUT') : undefined));
    const healthy = fakeProducer();
    const { committer, metrics, made } = committerWith([broken, healthy]);
    let round = 0;
    const { source, outcomes } = sourceFor(committer, () => (round++ < 2 ? [part(round)] : []));
    await committer.start(source);
    committer.wake(true);
    await committer.idle();
    await committer.ready();
    committer.wake(true);
    await committer.idle();
    expect(await Promise.all(outcomes)).toEqual([{ failed: 'commit' }, { ok: '101' }]);
    expect(made()).toBe(2);
    expect(healthy.rec.commits).toBe(1);
    expect(await count(metrics, 'failed')).toBe(1);
    await committer.stop();
  });

  it('stops the instance when another process took its transactional id, and refuses every later commit', async () => {
    const fenced = fakeProducer((step) => (step === 'commit' ? brokerError('PRODUCER_FENCED') : undefined));
    const { committer, onFenced } = committerWith([fenced]);
    const { source, outcomes } = sourceFor(committer, () => [part(0)]);
    await committer.start(source);
    committer.wake(true);
    await committer.idle();
    expect(await Promise.all(outcomes)).toEqual([{ failed: 'fenced' }]);
    expect(onFenced).toHaveBeenCalledTimes(1);
    await expect(committer.ready()).rejects.toMatchObject({ kind: 'fenced' });
    await expect(committer.commit(part(1))).rejects.toMatchObject({ kind: 'fenced' });
    await committer.stop();
  });

  it('takes a fenced transaction older than TRANSACTION_TIMEOUT_MS for the broker aborting it: replaced, not stopped', async () => {
    const expired = fakeProducer((step) => (step === 'commit' ? brokerError('INVALID_PRODUCER_EPOCH') : undefined));
    let made = 0;
    const onFenced = jest.fn();
    const metrics = createProcessorMetrics();
    const committer = new InstanceCommitter({
      createProducer: async () => (made++ === 0 ? expired.producer : fakeProducer().producer),
      groupId: 'g',
      topics,
      intervalMs: 20,
      transactionTimeoutMs: 0, // every transaction counts as old
      logger: silent,
      metrics,
      onFenced,
    });
    const { source, outcomes } = sourceFor(committer, () => [part(0)]);
    await committer.start(source);
    committer.wake(true);
    await committer.idle();
    await committer.ready();
    expect(await Promise.all(outcomes)).toEqual([{ failed: 'fenced' }]);
    expect(onFenced).not.toHaveBeenCalled();
    expect(made).toBe(2);
    expect(await count(metrics, 'expired')).toBe(1);
    await committer.stop();
  });

  it('commits a unit handed over outside a cycle (isolation, a graceful flush) in a transaction of its own, after the cycle in flight', async () => {
    const { producer, rec } = fakeProducer();
    const { committer } = committerWith([{ producer, rec }]);
    await committer.start({ commitDue: () => undefined, membership: () => undefined });
    const [a, b] = await Promise.all([committer.commit(part(4)), committer.commit(part(5))]);
    expect([a.checkpoint, b.checkpoint]).toEqual(['101', '111']);
    expect(rec.commits).toBe(2);
    await committer.stop();
  });
});
