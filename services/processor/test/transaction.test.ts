import type { Message, Producer, RecordMetadata, Transaction } from 'kafkajs';
import { TaskFailure } from '../src/tasks/errors';
import { assertEveryPartitionAnswered, commitUnit, commitUnits } from '../src/tasks/transaction';
import { UnitOfWork } from '../src/tasks/unit-of-work';

// The transaction's deadline alone; what a black-holed producer does to a running task is
// test/faults/regressions.itest.ts (a lone processor healed at a new address).

const topics = { changelog: 'changelog', results: 'results', deadLetter: 'dlq' };

function unitWithOffsets(): UnitOfWork {
  const unit = new UnitOfWork();
  unit.offsets.set('events', 10n);
  return unit;
}

/** What a broker answers for a slice: one entry per (topic, partition) it got, keyed records on partition 0. */
function answer(topicMessages: Array<{ topic: string; messages: Message[] }>): RecordMetadata[] {
  const out: RecordMetadata[] = [];
  for (const { topic, messages } of topicMessages) {
    for (const partition of new Set(messages.map((m) => m.partition ?? 0))) {
      out.push({ topicName: topic, partition, errorCode: 0, baseOffset: '0' });
    }
  }
  return out;
}

function producerWhoseCommit(commit: () => Promise<void>) {
  const calls = { aborts: 0, commits: 0 };
  const tx = {
    sendBatch: async () => [],
    sendOffsets: async () => undefined,
    commit: () => {
      calls.commits++;
      return commit();
    },
    abort: async () => {
      calls.aborts++;
    },
  } as unknown as Transaction;
  const producer = { transaction: async () => tx } as unknown as Pick<Producer, 'transaction'>;
  return { producer, calls };
}

describe('commitUnit', () => {
  it('gives up on a transaction with no answer by its deadline: a commit failure, the transaction left to the next fence', async () => {
    const { producer, calls } = producerWhoseCommit(() => new Promise(() => undefined));
    const err = await commitUnit(producer, unitWithOffsets(), { task: 3, groupId: 'g', topics, deadlineMs: 30 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TaskFailure);
    expect((err as TaskFailure).kind).toBe('commit');
    expect(String((err as TaskFailure).cause)).toMatch(/no answer within 30 ms/);
    expect(calls.aborts).toBe(0); // an abort would go into the same hole
  });

  it('aborts a transaction that failed in time', async () => {
    const { producer, calls } = producerWhoseCommit(() => Promise.reject(new Error('broken')));
    const err = await commitUnit(producer, unitWithOffsets(), { task: 3, groupId: 'g', topics }).catch(
      (e: unknown) => e,
    );
    expect((err as TaskFailure).kind).toBe('commit');
    expect(calls.aborts).toBe(1);
  });

  it('commits within the deadline', async () => {
    const { producer, calls } = producerWhoseCommit(async () => undefined);
    const done = await commitUnit(producer, unitWithOffsets(), { task: 3, groupId: 'g', topics, deadlineMs: 1_000 });
    expect(done).toEqual({ changes: [], checkpoint: null });
    expect(calls.commits).toBe(1);
  });

  it("puts every input position on each changelog record (default: the unit's own offsets), none elsewhere", async () => {
    const sent: Array<{ topic: string; messages: Message[] }> = [];
    const tx = {
      sendBatch: async ({ topicMessages }: { topicMessages: typeof sent }) => {
        sent.push(...topicMessages);
        return answer(topicMessages as Array<{ topic: string; messages: Message[] }>);
      },
      sendOffsets: async () => undefined,
      commit: async () => undefined,
      abort: async () => undefined,
    } as unknown as Transaction;
    const producer = { transaction: async () => tx } as unknown as Pick<Producer, 'transaction'>;
    const unit = unitWithOffsets();
    unit.cache.put('a', { version: 1, value: {}, seen: '' });
    unit.cache.delete('b');
    unit.results.push({ key: 'a', value: 'r' });
    await commitUnit(producer, unit, { task: 3, groupId: 'g', topics });
    await commitUnit(producer, unit, {
      task: 3,
      groupId: 'g',
      topics,
      inputs: new Map([
        ['commands', 4n],
        ['events', 10n],
      ]),
    });
    const headers = (topic: string) =>
      sent.filter((t) => t.topic === topic).flatMap((t) => t.messages.map((m) => m.headers?.['sr-inputs']));
    expect(headers('changelog')).toEqual(['events=10', 'events=10', 'commands=4,events=10', 'commands=4,events=10']);
    expect(headers('results')).toEqual([undefined, undefined]);
  });
});

describe('commitUnit after an early failure', () => {
  afterEach(() => jest.useRealTimers());

  it('does not wait past its deadline for an abort that never settles', async () => {
    jest.useFakeTimers();
    const tx = {
      sendBatch: async () => [],
      sendOffsets: () => Promise.reject(new Error('coordinator gone')),
      commit: async () => undefined,
      abort: () => new Promise(() => undefined),
    } as unknown as Transaction;
    const producer = { transaction: async () => tx } as unknown as Pick<Producer, 'transaction'>;
    let outcome: unknown;
    const committing = commitUnit(producer, unitWithOffsets(), {
      task: 1,
      groupId: 'g',
      topics,
      deadlineMs: 1_000,
    }).then(
      () => (outcome = 'committed'),
      (err: unknown) => (outcome = err),
    );
    await jest.advanceTimersByTimeAsync(1_000); // the deadline, and the promises it settles
    expect(outcome).toBeInstanceOf(TaskFailure);
    expect((outcome as TaskFailure).kind).toBe('commit');
    expect(String((outcome as TaskFailure).cause)).toMatch(/coordinator gone/);
    await committing;
  });
});

describe('commitUnit and the bytes measured at fold', () => {
  it('sends the encoded bytes the unit holds, without encoding the entity again', async () => {
    const sent: Array<{ topic: string; messages: Array<{ key: unknown; value: unknown }> }> = [];
    const tx = {
      sendBatch: async ({ topicMessages }: { topicMessages: typeof sent }) => {
        sent.push(...topicMessages);
        return answer(topicMessages as Array<{ topic: string; messages: Message[] }>);
      },
      sendOffsets: async () => undefined,
      commit: async () => undefined,
      abort: async () => undefined,
    } as unknown as Transaction;
    const producer = { transaction: async () => tx } as unknown as Pick<Producer, 'transaction'>;
    const unit = unitWithOffsets();
    const measured = Buffer.from('{"measured":true}');
    unit.put('k', { version: 1, value: { a: 1 }, seen: '' }, measured);
    const { changes } = await commitUnit(producer, unit, { task: 0, groupId: 'g', topics });
    expect(changes).toEqual([['k', measured]]);
    expect(sent[0]!.messages[0]!.value).toBe(measured);
  });
});

describe('commitUnit and a sendBatch that skipped a partition', () => {
  const slice = (topic: string, ...partitions: Array<number | undefined>) => ({
    topic,
    messages: partitions.map((partition) => ({ key: 'k', value: 'v', ...(partition !== undefined && { partition }) })),
  });
  const meta = (topicName: string, partition: number): RecordMetadata => ({
    topicName,
    partition,
    errorCode: 0,
    baseOffset: '0',
  });

  it('names every sent partition the reply lacks; keyed records need their topic in it', () => {
    expect(() =>
      assertEveryPartitionAnswered([slice('changelog', 0, 3, 3), slice('results', undefined)], [meta('changelog', 0)]),
    ).toThrow('sendBatch reported success without an answer for changelog-3, results (keyed records)');
    expect(() =>
      assertEveryPartitionAnswered(
        [slice('changelog', 0, 3), slice('results', undefined, undefined)],
        [meta('changelog', 3), meta('changelog', 0), meta('results', 5)],
      ),
    ).not.toThrow();
  });

  it('aborts the transaction instead of committing it without the records (kafkajs#1303)', async () => {
    const calls = { aborts: 0, commits: 0, offsets: 0 };
    const tx = {
      // node 1 led changelog-2 and moved it to node 2, which had answered for changelog-1 already
      sendBatch: async () => [meta('changelog', 1)],
      sendOffsets: async () => {
        calls.offsets++;
      },
      commit: async () => {
        calls.commits++;
      },
      abort: async () => {
        calls.aborts++;
      },
    } as unknown as Transaction;
    const producer = { transaction: async () => tx } as unknown as Pick<Producer, 'transaction'>;
    const one = unitWithOffsets();
    one.cache.put('a', { version: 1, value: {}, seen: '' });
    const two = unitWithOffsets();
    two.cache.put('b', { version: 1, value: {}, seen: '' });
    const err = await commitUnits(
      producer,
      [
        { task: 1, unit: one, inputs: one.offsets },
        { task: 2, unit: two, inputs: two.offsets },
      ],
      { groupId: 'g', topics },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskFailure);
    expect((err as TaskFailure).kind).toBe('commit');
    expect(String((err as TaskFailure).cause)).toMatch(/changelog-2/);
    expect(calls).toEqual({ aborts: 1, commits: 0, offsets: 0 });
  });
});
