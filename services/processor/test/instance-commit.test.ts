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

const MEMBER = { generationId: 3, memberId: 'm' };
/** An owner that holds its task under MEMBER. */
const heldBy = (builtUnder = MEMBER, holds = () => true) => ({ builtUnder, holds });

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
    membership: () => MEMBER,
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
  const part = (task: number) => ({
    task,
    unit: unitOf(`k${task}`, 1n, 1n),
    inputs: new Map([['events', 1n]]),
    owner: heldBy(),
  });

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
    await committer.start({ commitDue: () => undefined, membership: () => MEMBER });
    const [a, b] = await Promise.all([committer.commit(part(4)), committer.commit(part(5))]);
    expect([a.checkpoint, b.checkpoint]).toEqual(['101', '111']);
    expect(rec.commits).toBe(2);
    await committer.stop();
  });
});

/** A latch: `wait` resolves once `open()` was called. */
function latch() {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** A membership the test moves, and per-task incarnations the test ends. */
function movableSource(committer: InstanceCommitter) {
  let membership: { generationId: number; memberId: string } | undefined = MEMBER;
  const held = new Map<number, boolean>();
  const owner = (task: number) => ({ builtUnder: membership, holds: () => held.get(task) ?? true });
  const partOf = (task: number, key = `k${task}`) => ({
    task,
    unit: unitOf(key, BigInt(task + 1), 1n),
    inputs: new Map([['events', BigInt(task + 1)]]),
    owner: owner(task),
  });
  const settle = (p: Promise<unknown>) =>
    p.then(
      (c) => ({ ok: (c as { checkpoint: string }).checkpoint }),
      (err: TaskFailure) => ({ failed: err.kind }),
    );
  let due: Array<ReturnType<typeof partOf>> = [];
  const outcomes: Array<Promise<unknown>> = [];
  const source: CommitSource = {
    commitDue: () => {
      for (const p of due) outcomes.push(settle(committer.commit(p)));
      due = [];
    },
    membership: () => membership,
  };
  return {
    source,
    outcomes,
    partOf,
    settle,
    due: (...parts: Array<ReturnType<typeof partOf>>) => (due = parts),
    move: (next: typeof membership) => (membership = next),
    end: (task: number) => held.set(task, false),
  };
}

/** The groups, generations and partitions that reached sendOffsets. */
const sentOffsets = (rec: Recorded) =>
  (rec.offsets as Array<{ generationId?: number; topics: Array<{ partitions: Array<{ partition: number }> }> }>).map(
    (o) => ({ generationId: o.generationId, partitions: o.topics[0]!.partitions.map((p) => p.partition) }),
  );

describe('InstanceCommitter: a part goes out only under a membership its incarnation holds (issue 31.1)', () => {
  it('rejects, never sends, a part queued behind a transaction in flight whose task moved to another member meanwhile', async () => {
    const hold = latch();
    const { producer, rec } = fakeProducer();
    const tx = await producer.transaction();
    const commit = tx.commit.bind(tx);
    (tx as { commit: () => Promise<void> }).commit = async () => {
      await hold.wait; // the cycle's transaction stays open
      await commit();
    };
    (producer as { transaction: () => Promise<Transaction> }).transaction = async () => tx;
    const { committer, metrics } = committerWith([{ producer, rec }]);
    const s = movableSource(committer);
    await committer.start(s.source);
    s.due(s.partOf(0));
    committer.wake(true);
    await new Promise((r) => setTimeout(r, 5));
    // An isolation commit of task 1, built under generation 3, waits its turn behind the cycle.
    const queued = s.settle(committer.commit(s.partOf(1)));
    // The rebalance to generation 4 moves task 1 to another instance: its incarnation ends.
    s.move({ generationId: 4, memberId: 'm' });
    s.end(1);
    hold.open();
    await committer.idle();
    expect(await Promise.all(s.outcomes)).toEqual([{ ok: '101' }]);
    expect(await queued).toEqual({ failed: 'migrated' });
    // Only the cycle's transaction reached the broker, under the generation it was built under.
    expect(sentOffsets(rec)).toEqual([{ generationId: 3, partitions: [0] }]);
    expect(rec.batches).toHaveLength(1);
    expect(rec.commits).toBe(1);
    expect((await metrics.commitPartsRejected.get()).values[0]!.value).toBe(1);
    await committer.stop();
  });

  it('sends a queued part whose task the instance kept under the new generation, with that generation', async () => {
    const hold = latch();
    const { producer, rec } = fakeProducer();
    const tx = await producer.transaction();
    const commit = tx.commit.bind(tx);
    (tx as { commit: () => Promise<void> }).commit = async () => {
      await hold.wait;
      await commit();
    };
    (producer as { transaction: () => Promise<Transaction> }).transaction = async () => tx;
    const { committer } = committerWith([{ producer, rec }]);
    const s = movableSource(committer);
    await committer.start(s.source);
    s.due(s.partOf(0));
    committer.wake(true);
    await new Promise((r) => setTimeout(r, 5));
    const queued = s.settle(committer.commit(s.partOf(1)));
    s.move({ generationId: 4, memberId: 'm' }); // task 1 kept: its incarnation holds it
    hold.open();
    await committer.idle();
    expect(await queued).toEqual({ ok: '111' });
    expect(sentOffsets(rec)).toEqual([
      { generationId: 3, partitions: [0] },
      { generationId: 4, partitions: [1] },
    ]);
    await committer.stop();
  });

  it('rejects parts that waited on a replaced producer while the member rejoined under a new member id (a thawed zombie)', async () => {
    const { producer, rec } = fakeProducer();
    let release!: () => void;
    const initialised = new Promise<void>((r) => (release = r));
    const metrics = createProcessorMetrics();
    const committer = new InstanceCommitter({
      createProducer: async () => {
        await initialised; // InitProducerId of a replacement producer, still pending
        return producer;
      },
      groupId: 'g',
      topics,
      intervalMs: 20,
      transactionTimeoutMs: 60_000,
      logger: silent,
      metrics,
      onFenced: jest.fn(),
    });
    const s = movableSource(committer);
    void committer.start(s.source);
    s.due(s.partOf(0), s.partOf(1));
    committer.wake(true);
    await new Promise((r) => setTimeout(r, 5));
    // kafkajs rejoined meanwhile: a new member id, and every task of the old incarnation failed.
    s.move({ generationId: 9, memberId: 'm-new' });
    s.end(0);
    s.end(1);
    release();
    await committer.idle();
    expect(await Promise.all(s.outcomes)).toEqual([{ failed: 'migrated' }, { failed: 'migrated' }]);
    expect(rec.batches).toHaveLength(0);
    expect(rec.offsets).toHaveLength(0);
    await committer.stop();
  });

  it('rejects a part built under another member id even if its holder says it holds (defence in depth)', async () => {
    const { producer, rec } = fakeProducer();
    const { committer } = committerWith([{ producer, rec }]);
    await committer.start({ commitDue: () => undefined, membership: () => ({ generationId: 4, memberId: 'm-2' }) });
    const stale = { ...movableSource(committer).partOf(0), owner: heldBy({ generationId: 3, memberId: 'm-1' }) };
    await expect(committer.commit(stale)).rejects.toMatchObject({ kind: 'migrated' });
    expect(rec.offsets).toHaveLength(0);
    await committer.stop();
  });

  it('aborts before the offsets go when a rebalance that moved one of its tasks lands while its records are sent', async () => {
    const { producer, rec } = fakeProducer();
    const tx = await producer.transaction();
    const sendBatch = tx.sendBatch.bind(tx);
    const { committer, metrics, made } = committerWith([{ producer, rec }]);
    const s = movableSource(committer);
    (tx as { sendBatch: typeof sendBatch }).sendBatch = async (batch) => {
      const meta = await sendBatch(batch);
      s.move({ generationId: 4, memberId: 'm' }); // the assignment of generation 4 arrives here
      s.end(1);
      return meta;
    };
    (producer as { transaction: () => Promise<Transaction> }).transaction = async () => tx;
    await committer.start(s.source);
    s.due(s.partOf(0), s.partOf(1));
    committer.wake(true);
    await committer.idle();
    expect(await Promise.all(s.outcomes)).toEqual([{ failed: 'migrated' }, { failed: 'migrated' }]);
    expect(rec.offsets).toHaveLength(0);
    expect(rec.aborts).toBe(1);
    expect(rec.commits).toBe(0);
    expect(await count(metrics, 'stale-member')).toBe(1);
    expect(made()).toBe(1); // aborted cleanly: the producer is kept
    await committer.stop();
  });

  it('sends under the new generation when a rebalance that kept every task lands while its records are sent', async () => {
    const { producer, rec } = fakeProducer();
    const tx = await producer.transaction();
    const sendBatch = tx.sendBatch.bind(tx);
    const { committer } = committerWith([{ producer, rec }]);
    const s = movableSource(committer);
    (tx as { sendBatch: typeof sendBatch }).sendBatch = async (batch) => {
      const meta = await sendBatch(batch);
      s.move({ generationId: 4, memberId: 'm' });
      return meta;
    };
    (producer as { transaction: () => Promise<Transaction> }).transaction = async () => tx;
    await committer.start(s.source);
    s.due(s.partOf(0), s.partOf(1));
    committer.wake(true);
    await committer.idle();
    expect(await Promise.all(s.outcomes)).toEqual([{ ok: '101' }, { ok: '111' }]);
    expect(sentOffsets(rec)).toEqual([{ generationId: 4, partitions: [0, 1] }]);
    await committer.stop();
  });

  it('commits nothing without a membership (31.7: v2 never commits offsets without the generation fence)', async () => {
    const { producer, rec } = fakeProducer();
    const { committer } = committerWith([{ producer, rec }]);
    await committer.start({ commitDue: () => undefined, membership: () => undefined });
    const s = movableSource(committer);
    await expect(committer.commit(s.partOf(0))).rejects.toMatchObject({ kind: 'migrated' });
    expect(rec.batches).toHaveLength(0);
    expect(rec.offsets).toHaveLength(0);
    await committer.stop();
  });
});

describe('InstanceCommitter: a refused record fails only its own task (issue 31.4)', () => {
  it('retries each part alone after the broker refused the shared transaction; only the refusing task fails', async () => {
    /** A producer whose sendBatch refuses any batch holding the key 'poison', as a broker refuses a too-large record. */
    const refusing = () => {
      const made = fakeProducer();
      const inner = made.producer.transaction.bind(made.producer);
      (made.producer as { transaction: () => Promise<Transaction> }).transaction = async () => {
        const tx = await inner();
        const sendBatch = tx.sendBatch.bind(tx);
        return {
          ...tx,
          sendBatch: async (batch: Parameters<typeof sendBatch>[0]) => {
            const keys = batch.topicMessages!.flatMap((t) => t.messages.map((m) => String(m.key)));
            if (keys.includes('poison')) throw Object.assign(new Error('too large'), { type: 'MESSAGE_TOO_LARGE' });
            return sendBatch(batch);
          },
        } as Transaction;
      };
      return made;
    };
    const first = refusing();
    const second = refusing();
    const { committer, metrics, made } = committerWith([first, second]);
    const s = movableSource(committer);
    await committer.start(s.source);
    s.due(s.partOf(0), s.partOf(1, 'poison'), s.partOf(2));
    committer.wake(true);
    await committer.idle();
    expect(await Promise.all(s.outcomes)).toEqual([{ ok: '101' }, { failed: 'commit' }, { ok: '111' }]);
    expect(await count(metrics, 'refused')).toBe(1);
    // Replaced after the shared refusal and after task 1's own (an unknown outcome, as any failure).
    expect(made()).toBe(3);
    // Task 1's failure carries the refusal, so its PoisonWatch counts it; tasks 0 and 2 committed.
    expect(second.rec.commits).toBe(2);
    expect(sentOffsets(second.rec).map((o) => o.partitions)).toEqual([[0], [2]]);
    await committer.stop();
  });
});
