import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountsDomain } from '@state-relay/accounts';
import { encodeEvent } from '@state-relay/contracts';
import type { TaskOwnership } from '@state-relay/kafka-runtime';
import { TaskStore } from '@state-relay/store';
import type { KafkaMessage, Producer } from 'kafkajs';
import pino from 'pino';
import { createProcessorMetrics } from '../src/metrics';
import { TaskLifecycle, type LifecyclePorts } from '../src/tasks/lifecycle';

// The lifecycle against fake ports: every call is recorded in order, so the tests pin the
// order of a task's path to RUNNING and what a failure may and may not do next.

const EVENTS = 'events';
const COMMANDS = 'commands';
const DAY = 86_400_000;

interface Harness {
  lifecycle: TaskLifecycle;
  calls: string[];
  dir: string;
  ownership: { value: TaskOwnership };
  commitError: { value: unknown };
  restoreFrom: Array<Map<number, bigint | null>>;
  ends: Map<number, bigint>;
  /** Per sendBatch: changelog records; per sendOffsets: the events offset committed. */
  sent: number[];
  offsets: number[];
}

function fakeProducer(task: number, h: Pick<Harness, 'calls' | 'commitError' | 'sent' | 'offsets'>): Producer {
  return {
    transaction: async () => ({
      sendBatch: async ({ topicMessages }: { topicMessages: Array<{ topic: string; messages: unknown[] }> }) => {
        h.calls.push(`send ${task}`);
        h.sent.push(topicMessages.find((t) => t.topic === 'changelog')?.messages.length ?? 0);
        return topicMessages.map((t) => ({ topicName: t.topic, partition: task, errorCode: 0, baseOffset: '100' }));
      },
      sendOffsets: async ({ topics }: { topics: Array<{ topic: string; partitions: Array<{ offset: string }> }> }) => {
        h.calls.push(`offsets ${task}`);
        h.offsets.push(Number(topics.find((t) => t.topic === EVENTS)?.partitions[0]?.offset));
      },
      commit: async () => {
        if (h.commitError.value) throw h.commitError.value;
        h.calls.push(`commit ${task}`);
      },
      abort: async () => {
        h.calls.push(`abort ${task}`);
      },
    }),
    disconnect: async () => {
      h.calls.push(`disconnect ${task}`);
    },
  } as unknown as Producer;
}

function harness(): Harness {
  const dir = mkdtempSync(join(tmpdir(), 'lifecycle-'));
  const h = {
    calls: [] as string[],
    dir,
    ownership: { value: 'owner' as TaskOwnership },
    commitError: { value: undefined as unknown },
    restoreFrom: [] as Array<Map<number, bigint | null>>,
    sent: [] as number[],
    offsets: [] as number[],
    ends: new Map<number, bigint>([
      [0, 0n],
      [1, 0n],
    ]),
  };
  const ports: LifecyclePorts = {
    initProducer: async (task) => {
      h.calls.push(`init-producer ${task}`);
      return fakeProducer(task, h);
    },
    openStore: (task) => TaskStore.open({ dir, task }),
    removeStore: (task) => {
      h.calls.push(`remove-store ${task}`);
      TaskStore.remove({ dir, task });
    },
    changelogEnds: async () => {
      h.calls.push('changelog-end');
      return h.ends;
    },
    restore: async ({ from }) => {
      h.calls.push('restore');
      h.restoreFrom.push(new Map(from));
      return { records: 0 };
    },
    committedOffsets: async () => {
      h.calls.push('committed-offsets');
      return new Map([
        [
          EVENTS,
          new Map([
            [0, '7'],
            [1, '3'],
          ]),
        ],
        [
          COMMANDS,
          new Map([
            [0, '2'],
            [1, '0'],
          ]),
        ],
      ]);
    },
    ownership: async (_member, task) => {
      h.calls.push(`ownership ${task}`);
      return h.ownership.value;
    },
    pause: (task) => h.calls.push(`pause ${task}`),
    resume: (task) => h.calls.push(`resume ${task}`),
    seek: (topic, task, offset) => h.calls.push(`seek ${topic} ${task} ${offset}`),
  };
  const lifecycle = new TaskLifecycle({
    ports,
    deleteRetentionMs: DAY,
    inputTopics: [EVENTS, COMMANDS],
    retryBaseMs: 1,
    retryMaxMs: 5,
    task: {
      domain: accountsDomain,
      topics: { events: EVENTS, commands: COMMANDS, results: 'results', deadLetter: 'dlq', changelog: 'changelog' },
      groupId: 'group',
      logger: pino({ level: 'silent' }),
      metrics: createProcessorMetrics(),
      commitIntervalMs: 1,
      commitMaxRecords: 1000,
      maxUncommittedRecords: 5000,
    },
  });
  return { ...h, lifecycle };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function signUp(offset: number, key: string): KafkaMessage {
  return {
    key: Buffer.from(key),
    value: encodeEvent({ type: 'signed_up', at: Date.UTC(2026, 0, 1), data: {} }),
    offset: String(offset),
    timestamp: String(Date.now()),
    attributes: 0,
    headers: {},
  } as KafkaMessage;
}

describe('task lifecycle', () => {
  let h: Harness;
  beforeEach(() => {
    h = harness();
  });
  afterEach(async () => {
    await h.lifecycle.closeAll();
    rmSync(h.dir, { recursive: true, force: true });
  });

  it('fences (InitProducerId) before it reads the changelog end, and seeks to offsets read after both', async () => {
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    expect(h.calls).toEqual([
      'pause 0', // assigned: paused until RUNNING
      'pause 0',
      'init-producer 0',
      'changelog-end',
      'restore',
      'committed-offsets',
      `seek ${EVENTS} 0 7`,
      `seek ${COMMANDS} 0 2`,
      'resume 0',
    ]);
    expect(h.lifecycle.allRunning).toBe(true);
  });

  it('folds only while RUNNING and commits the unit with the offsets of what it folded', async () => {
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    const task = h.lifecycle.runningTask(0)!;
    expect(
      await task.foldBatch({
        topic: EVENTS,
        partition: 0,
        messages: [signUp(7, 'k1'), signUp(8, 'k2')],
        lastOffset: '8',
      }),
    ).toBe(true);
    // A re-delivery of what was folded already is skipped, not applied twice.
    expect(await task.foldBatch({ topic: EVENTS, partition: 0, messages: [signUp(8, 'k2')], lastOffset: '8' })).toBe(
      true,
    );
    // The store is written a few microtasks after the Kafka commit: wait for both.
    await until(() => h.calls.includes('commit 0') && task.read('k1') !== undefined, 'a commit');
    expect(task.read('k1')?.version).toBe(1);
    expect(task.read('k2')?.version).toBe(1);
    expect(task.positions().get(EVENTS)).toBe(9n);
    expect(h.calls.filter((c) => c === 'commit 0')).toHaveLength(1);
  });

  it('a batch folded in slices commits, in every transaction, the offset after the last record it carries', async () => {
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    const task = h.lifecycle.runningTask(0)!;
    const messages = Array.from({ length: 1_234 }, (_, i) => signUp(7 + i, `key-${i}`));
    expect(await task.foldBatch({ topic: EVENTS, partition: 0, messages, lastOffset: String(7 + 1_233 + 1) })).toBe(
      true,
    );
    await until(() => h.offsets.at(-1) === 7 + 1_234 + 1, 'the whole batch (and its trailing marker) to commit');
    // Commits landed between slices: each one's offset is right after the records it carried.
    expect(h.offsets.length).toBeGreaterThan(1);
    let carried = 0;
    h.offsets.forEach((offset, i) => {
      carried += h.sent[i] ?? 0; // the last transaction may carry only the marker's offset
      if (i < h.offsets.length - 1) expect(offset).toBe(7 + carried);
    });
    expect(carried).toBe(1_234);
  });

  it('a fenced task the coordinator does not give us waits, without fencing again; the next assignment re-enters it', async () => {
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    h.ownership.value = 'not-owner';
    h.commitError.value = Object.assign(new Error('producer fenced'), { type: 'PRODUCER_FENCED' });
    await h.lifecycle
      .runningTask(0)!
      .foldBatch({ topic: EVENTS, partition: 0, messages: [signUp(7, 'k1')], lastOffset: '7' });
    await until(() => h.calls.filter((c) => c === 'ownership 0').length >= 2, 'two ownership checks');
    expect(h.lifecycle.stateOf(0)).toBe('FAILED');
    expect(h.lifecycle.runningTask(0)).toBeUndefined();
    expect(h.calls.filter((c) => c === 'init-producer 0')).toHaveLength(1);
    expect(h.lifecycle.allRunning).toBe(false);

    h.commitError.value = undefined;
    h.lifecycle.onAssignment('member-a2', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run again');
    expect(h.calls.filter((c) => c === 'init-producer 0')).toHaveLength(2);
    // The dropped unit is not in the store: k1 is consumed again from the committed offset.
    expect(h.lifecycle.read('k1')).toBeUndefined();
  });

  it('a fenced task that is still ours (its transaction expired) re-enters by itself', async () => {
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    h.commitError.value = Object.assign(new Error('producer fenced'), { type: 'INVALID_PRODUCER_EPOCH' });
    await h.lifecycle
      .runningTask(0)!
      .foldBatch({ topic: EVENTS, partition: 0, messages: [signUp(7, 'k1')], lastOffset: '7' });
    await until(() => h.calls.includes('ownership 0'), 'an ownership check');
    h.commitError.value = undefined;
    await until(
      () => h.lifecycle.stateOf(0) === 'RUNNING' && h.calls.filter((c) => c === 'init-producer 0').length === 2,
      're-entry',
    );
    const after = h.calls.slice(h.calls.lastIndexOf('init-producer 0'));
    expect(after.slice(0, 4)).toEqual(['init-producer 0', 'changelog-end', 'restore', 'committed-offsets']);
  });

  it('a revoked task is closed and its state file deleted', async () => {
    h.lifecycle.onAssignment('member-a', [0, 1]);
    await until(() => h.lifecycle.allRunning, 'both tasks to run');
    h.lifecycle.onAssignment('member-a', [1]);
    await until(() => h.calls.includes('remove-store 0'), 'task 0 to be removed');
    expect(h.lifecycle.owned).toEqual([1]);
    expect(h.lifecycle.stateOf(0)).toBeUndefined();
  });

  it('rebuilds a store that last matched the changelog longer ago than delete.retention.ms', async () => {
    const store = TaskStore.open({ dir: h.dir, task: 0 });
    const entity = { version: 1, value: { status: 'active' }, seen: '' };
    store.commit([['gone', entity]], '5', Date.now() - 2 * DAY);
    store.close();
    h.ends.set(0, 40n); // records were added since the checkpoint: a tombstone may be among them
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    expect(h.restoreFrom[0]!.get(0)).toBeNull();
    expect(h.lifecycle.read('gone')).toBeUndefined();
  });

  it('trusts an old store when nothing but its own commit marker follows its checkpoint', async () => {
    const store = TaskStore.open({ dir: h.dir, task: 0 });
    store.commit([['kept', { version: 1, value: { status: 'active' }, seen: '' }]], '5', Date.now() - 2 * DAY);
    store.close();
    h.ends.set(0, 6n);
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    expect(h.restoreFrom[0]!.get(0)).toBe(5n);
    expect(h.lifecycle.read('kept')?.entity.version).toBe(1);
  });

  it('a store that fails after the Kafka commit fails the task; the other input is not applied to the stale store', async () => {
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    const task = h.lifecycle.runningTask(0)!;
    const store = task.store!;
    const commit = store.commit.bind(store);
    let failOnce = true;
    store.commit = (...args: Parameters<TaskStore['commit']>) => {
      if (failOnce) {
        failOnce = false;
        throw new Error('disk I/O error');
      }
      commit(...args);
    };
    h.ownership.value = 'rebalancing'; // hold the task in FAILED until the test lets it go
    await task.foldBatch({ topic: EVENTS, partition: 0, messages: [signUp(7, 'k1')], lastOffset: '7' });
    await until(() => h.lifecycle.stateOf(0) === 'FAILED', 'the failure');
    // The other input's next batch must not run on the store that missed the committed unit.
    expect(await task.foldBatch({ topic: COMMANDS, partition: 0, messages: [signUp(2, 'k1')], lastOffset: '2' })).toBe(
      false,
    );
    expect(h.lifecycle.runningTask(0)).toBeUndefined();
    expect(h.calls).toContain('pause 0');
    h.ownership.value = 'owner';
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING' && h.lifecycle.runningTask(0) !== undefined, 'recovery');
    expect(h.calls.filter((c) => c === 'init-producer 0')).toHaveLength(2);
    expect(h.calls.filter((c) => c === 'restore')).toHaveLength(2);
  });
});
