import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountsDomain } from '@state-relay/accounts';
import { encodeEvent, encodeStoredEntity } from '@state-relay/contracts';
import type { TaskOwnership } from '@state-relay/kafka-runtime';
import { TaskStore } from '@state-relay/store';
import type { KafkaMessage, Message, Producer } from 'kafkajs';
import pino from 'pino';
import { createProcessorMetrics } from '../src/metrics';
import { RestoreProgress } from '../src/status/restore-progress';
import { InstanceCommitter, type CommitPort } from '../src/tasks/instance-commit';
import { TaskLifecycle, type ChangelogRecord, type LifecyclePorts } from '../src/tasks/lifecycle';

// The lifecycle against fake ports: every call is recorded in order, so the tests pin the
// order of a task's path to RUNNING and what a failure may and may not do next.

const EVENTS = 'events';
const COMMANDS = 'commands';
const DAY = 86_400_000;

interface Harness {
  lifecycle: TaskLifecycle;
  metrics: ReturnType<typeof createProcessorMetrics>;
  calls: string[];
  dir: string;
  ownership: { value: TaskOwnership };
  commitError: { value: unknown };
  /** While set, every commit waits for it (a transaction whose EndTxn is slow to come back). */
  commitGate: { value?: Promise<void> };
  restoreFrom: Array<Map<number, bigint | null>>;
  ends: Map<number, bigint>;
  /** Per sendBatch: changelog records; per sendOffsets: the events offset committed. */
  sent: number[];
  offsets: number[];
  /** Per sendBatch: the input-positions header of each changelog record. */
  headers: string[][];
  /** What the fake restore applies, per task (unless restoreWith replaces it). */
  restoreBatches: Array<{ task: number; records: ChangelogRecord[]; next: bigint }>;
  /** A port call that throws while this returns true for the task (pause, seek). */
  faults: { pause?: (task: number) => boolean; seek?: (task: number) => boolean };
  /** Replaces the fake restore. */
  restoreWith: { value?: RestorePort };
  /**
   * Awaited at the start of a port call, per task (a read an earlier owner's transaction holds,
   * a changelog end that does not settle): a promise that rejects fails the call.
   */
  holds: {
    initProducer?: (task: number) => Promise<void> | void;
    changelogEnds?: (task: number) => Promise<void> | void;
    committedOffsets?: (task: number) => Promise<void> | void;
  };
  /** What GET /status reports of the restores. */
  restores: RestoreProgress;
}

type RestorePort = LifecyclePorts['restore'];

function fakeProducer(
  task: number,
  h: Pick<Harness, 'calls' | 'commitError' | 'commitGate' | 'sent' | 'offsets' | 'headers'>,
): Producer {
  return {
    transaction: async () => ({
      sendBatch: async ({ topicMessages }: { topicMessages: Array<{ topic: string; messages: Message[] }> }) => {
        h.calls.push(`send ${task}`);
        const changelog = topicMessages.find((t) => t.topic === 'changelog')?.messages ?? [];
        h.sent.push(changelog.length);
        h.headers.push(changelog.map((m) => String(m.headers?.['sr-inputs'])));
        return topicMessages.map((t) => ({ topicName: t.topic, partition: task, errorCode: 0, baseOffset: '100' }));
      },
      sendOffsets: async ({ topics }: { topics: Array<{ topic: string; partitions: Array<{ offset: string }> }> }) => {
        h.calls.push(`offsets ${task}`);
        h.offsets.push(Number(topics.find((t) => t.topic === EVENTS)?.partitions[0]?.offset));
      },
      commit: async () => {
        await h.commitGate.value;
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

/** Exactly-once v2: the instance committer the tasks commit through, and how long a resumable task waits. */
interface V2Options {
  commits: (metrics: ReturnType<typeof createProcessorMetrics>) => CommitPort;
  resumeWaitMs?: number;
}

/** `cleanupDelayMs`: STATE_CLEANUP_DELAY_MS (0 by default here: a revoked task's store file goes at once). */
function harness(
  v2?: V2Options,
  taskOptions: { commandShare?: number; maxUncommittedRecords?: number; cleanupDelayMs?: number } = {},
): Harness {
  const dir = mkdtempSync(join(tmpdir(), 'lifecycle-'));
  const h = {
    calls: [] as string[],
    dir,
    ownership: { value: 'owner' as TaskOwnership },
    commitError: { value: undefined as unknown },
    commitGate: {} as Harness['commitGate'],
    restoreFrom: [] as Array<Map<number, bigint | null>>,
    sent: [] as number[],
    offsets: [] as number[],
    headers: [] as string[][],
    restoreBatches: [] as Harness['restoreBatches'],
    metrics: createProcessorMetrics(),
    faults: {} as Harness['faults'],
    restoreWith: {} as Harness['restoreWith'],
    holds: {} as Harness['holds'],
    restores: new RestoreProgress(),
    ends: new Map<number, bigint>([
      [0, 0n],
      [1, 0n],
    ]),
  };
  const ports: LifecyclePorts = {
    initProducer: async (task) => {
      h.calls.push(`init-producer ${task}`);
      await h.holds.initProducer?.(task);
      return v2 ? undefined : fakeProducer(task, h);
    },
    openStore: (task) => TaskStore.open({ dir, task }),
    removeStore: (task) => {
      h.calls.push(`remove-store ${task}`);
      TaskStore.remove({ dir, task });
    },
    storesOnDisk: () => TaskStore.tasksIn(dir),
    peekCheckpoint: (task) => TaskStore.peekCheckpoint({ dir, task }),
    changelogEnds: async (tasks) => {
      h.calls.push('changelog-end');
      for (const task of tasks ?? []) await h.holds.changelogEnds?.(task);
      return h.ends;
    },
    restore: async (request) => {
      h.calls.push('restore');
      h.restoreFrom.push(new Map(request.from));
      if (h.restoreWith.value) return h.restoreWith.value(request);
      const batches = h.restoreBatches.filter((b) => request.from.has(b.task));
      for (const { task, records, next } of batches) request.apply(task, records, next);
      return { records: batches.reduce((n, b) => n + b.records.length, 0), failed: new Map() };
    },
    committedOffsets: async (tasks) => {
      h.calls.push('committed-offsets');
      for (const task of tasks ?? []) await h.holds.committedOffsets?.(task);
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
    pause: (task) => {
      if (h.faults.pause?.(task)) throw new Error(`pause ${task} failed (injected)`);
      h.calls.push(`pause ${task}`);
    },
    resume: (task) => h.calls.push(`resume ${task}`),
    pauseTopic: (topic, task) => h.calls.push(`pause ${topic} ${task}`),
    resumeTopic: (topic, task) => h.calls.push(`resume ${topic} ${task}`),
    seek: (topic, task, offset) => {
      if (h.faults.seek?.(task)) throw new Error(`seek ${task} failed (injected)`);
      h.calls.push(`seek ${topic} ${task} ${offset}`);
    },
  };
  const metrics = h.metrics;
  const lifecycle = new TaskLifecycle({
    ports,
    deleteRetentionMs: DAY,
    inputTopics: [EVENTS, COMMANDS],
    retryBaseMs: 1,
    retryMaxMs: 5,
    restores: h.restores,
    stateCleanupDelayMs: taskOptions.cleanupDelayMs ?? 0,
    ...(v2?.resumeWaitMs !== undefined && { resumeWaitMs: v2.resumeWaitMs }),
    task: {
      ...(v2 && { commits: v2.commits(metrics) }),
      domain: accountsDomain,
      topics: { events: EVENTS, commands: COMMANDS, results: 'results', deadLetter: 'dlq', changelog: 'changelog' },
      groupId: 'group',
      logger: pino({ level: 'silent' }),
      metrics,
      commitIntervalMs: 1,
      commitMaxRecords: 1000,
      maxUncommittedRecords: 5000,
      ...taskOptions,
    },
  });
  return { ...h, lifecycle, metrics };
}

async function failuresOf(h: Harness, kind: string): Promise<number> {
  return (await h.metrics.taskFailures.get()).values.find((v) => v.labels.kind === kind)?.value ?? 0;
}

const account = (version: number) => ({ version, value: { status: 'active' }, seen: '' });
const record = (key: string) => ({ key: Buffer.from(key), value: Buffer.from(JSON.stringify(account(1))) });

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
    ).toBe('8'); // taken whole: the consumer resolves the batch's last offset
    // A re-delivery of what was folded already is skipped, not applied twice.
    expect(await task.foldBatch({ topic: EVENTS, partition: 0, messages: [signUp(8, 'k2')], lastOffset: '8' })).toBe(
      '8',
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
      String(7 + 1_233 + 1),
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
      undefined,
    );
    expect(h.lifecycle.runningTask(0)).toBeUndefined();
    expect(h.calls).toContain('pause 0');
    h.ownership.value = 'owner';
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING' && h.lifecycle.runningTask(0) !== undefined, 'recovery');
    expect(h.calls.filter((c) => c === 'init-producer 0')).toHaveLength(2);
    expect(h.calls.filter((c) => c === 'restore')).toHaveLength(2);
  });

  it('reports each restore for the status page: records restored and to go while it runs, then the last one', async () => {
    h.ends.set(1, 10n);
    let midway: ReturnType<RestoreProgress['view']> | undefined;
    h.restoreWith.value = async (request) => {
      if (!request.from.has(1)) return { records: 0, failed: new Map() };
      request.apply(1, [record('a'), record('b'), record('c')], 4n);
      midway = h.restores.view();
      request.apply(1, [record('d')], 10n);
      return { records: 4, failed: new Map() };
    };
    h.lifecycle.onAssignment('member-a', [0, 1]);
    await until(() => h.lifecycle.allRunning, 'both tasks to run');
    expect(midway!.inProgress).toContainEqual({ task: 1, restored: 3, toGo: 6, startedAt: expect.any(Number) });
    const done = h.restores.view();
    expect(done.inProgress).toEqual([]);
    expect(done.last.map(({ task, restored, ok }) => ({ task, restored, ok }))).toEqual([
      { task: 0, restored: 0, ok: true },
      { task: 1, restored: 4, ok: true },
    ]);
  });

  it('a restore that fails is reported as failed, not as in progress', async () => {
    h.restoreWith.value = async () => {
      throw new Error('fetching the changelog failed (injected)');
    };
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.restores.view().last.length > 0, 'the restore to end');
    expect(h.restores.view()).toMatchObject({ inProgress: [], last: [{ task: 0, ok: false }] });
  });

  describe('input positions (committed offsets read stale right after the fence)', () => {
    const entity = { version: 1, value: { status: 'active' }, seen: '' };
    const record = (key: string, header?: string): ChangelogRecord => ({
      key: Buffer.from(key),
      value: encodeStoredEntity(entity),
      headers: header === undefined ? {} : { 'sr-inputs': Buffer.from(header) },
    });
    const stale = async () => (await h.metrics.staleOffsets.get()).values.map((v) => [v.labels.topic, v.value]).sort();

    it('seeks to what the kept store reflects when the group offset is behind it, and counts it', async () => {
      const store = TaskStore.open({ dir: h.dir, task: 0 });
      store.commit(
        [['k', entity]],
        '5',
        Date.now(),
        new Map([
          [EVENTS, 20n],
          [COMMANDS, 1n],
        ]),
      );
      store.close();
      h.ends.set(0, 5n);
      h.lifecycle.onAssignment('member-a', [0]);
      await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
      // events: the store's 20 over the group's stale 7; commands: the group's 2 is ahead of the store's 1.
      expect(h.calls.filter((c) => c.startsWith('seek'))).toEqual([`seek ${EVENTS} 0 20`, `seek ${COMMANDS} 0 2`]);
      expect(h.lifecycle.runningTask(0)!.positions()).toEqual(
        new Map([
          [EVENTS, 20n],
          [COMMANDS, 2n],
        ]),
      );
      expect(await stale()).toEqual([[EVENTS, 1]]);
    });

    it('learns the positions from the changelog headers on a restore from scratch', async () => {
      h.ends.set(0, 4n);
      h.restoreBatches.push(
        { task: 0, records: [record('a', `${COMMANDS}=4,${EVENTS}=30`), record('b', 'garbage')], next: 2n },
        { task: 0, records: [record('c', `${COMMANDS}=4,${EVENTS}=31`), record('d')], next: 4n },
      );
      h.lifecycle.onAssignment('member-a', [0]);
      await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
      expect(h.calls.filter((c) => c.startsWith('seek'))).toEqual([`seek ${EVENTS} 0 31`, `seek ${COMMANDS} 0 4`]);
      expect(h.lifecycle.read('d')?.entity.version).toBe(1);
      expect(await stale()).toEqual([
        [COMMANDS, 1],
        [EVENTS, 1],
      ]);
    });

    it('a committed unit carries every input position on each changelog record and in the store, atomically with its rows', async () => {
      h.lifecycle.onAssignment('member-a', [0]);
      await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
      const task = h.lifecycle.runningTask(0)!;
      await task.foldBatch({
        topic: EVENTS,
        partition: 0,
        messages: [signUp(7, 'k1'), signUp(8, 'k2')],
        lastOffset: '8',
      });
      await until(() => h.calls.includes('commit 0'), 'a commit');
      await until(() => task.read('k2') !== undefined, 'the SQLite flush');
      // The unit moved only events; commands' position (2, from the start) rides along.
      expect(h.headers).toEqual([[`${COMMANDS}=2,${EVENTS}=9`, `${COMMANDS}=2,${EVENTS}=9`]]);
      expect(task.store!.inputPositions()).toEqual(
        new Map([
          [EVENTS, 9n],
          [COMMANDS, 2n],
        ]),
      );
      expect(task.store!.checkpoint()).toBe('102');
      expect(await stale()).toEqual([]);
    });
  });

  it('an interrupted rebuild younger than delete.retention.ms resumes from its checkpoint', async () => {
    const store = TaskStore.open({ dir: h.dir, task: 0 });
    store.wipe(Date.now() - 60_000); // a rebuild began a minute ago…
    store.commit([['early', account(1)]], '20'); // …and applied records up to 20 before it stopped
    store.close();
    h.ends.set(0, 40n);
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    expect(h.restoreFrom[0]!.get(0)).toBe(20n);
    expect(h.lifecycle.read('early')?.entity.version).toBe(1);
  });

  it('an interrupted rebuild older than delete.retention.ms starts again from scratch', async () => {
    const store = TaskStore.open({ dir: h.dir, task: 0 });
    store.wipe(Date.now() - 2 * DAY);
    store.commit([['early', account(1)]], '20');
    store.close();
    h.ends.set(0, 40n);
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    expect(h.restoreFrom[0]!.get(0)).toBeNull();
    expect(h.lifecycle.read('early')).toBeUndefined();
  });

  it('a rebuild that fails after some batches continues from its checkpoint on the retry, not from 0', async () => {
    h.ends.set(0, 40n);
    let attempts = 0;
    h.restoreWith.value = async ({ apply }) => {
      if (attempts++ === 0) {
        apply(0, [record('a'), record('b')], 10n);
        throw new Error('fetching the changelog failed (injected)');
      }
      apply(0, [record('c')], 40n);
      return { records: 1, failed: new Map() };
    };
    h.lifecycle.onAssignment('member-a', [0]);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    expect(h.restoreFrom.map((f) => f.get(0))).toEqual([null, 10n]);
    expect(['a', 'b', 'c'].map((k) => h.lifecycle.read(k)?.entity.version)).toEqual([1, 1, 1]);
  });

  it("one task's store failing mid-restore fails that task only; the other runs without a second restore", async () => {
    h.ends.set(0, 40n);
    h.ends.set(1, 40n);
    let attempts = 0;
    h.restoreWith.value = async ({ from, apply }) => {
      // As the restorer does: an apply that throws drops its partition, the others go on.
      const failed = new Map<number, unknown>();
      for (const id of from.keys()) {
        try {
          if (id === 1 && attempts++ === 0) throw new Error('disk I/O error (injected)');
          apply(id, [record(`k${id}`)], 40n);
        } catch (err) {
          failed.set(id, err);
        }
      }
      return { records: 2 - failed.size, failed };
    };
    h.lifecycle.onAssignment('member-a', [0, 1]);
    await until(() => h.lifecycle.allRunning && h.restoreFrom.length === 3, 'both tasks to run');
    // Each task restores alone: task 0 once, task 1 again after its failure.
    expect(h.restoreFrom.map((f) => [...f.keys()]).sort()).toEqual([[0], [1], [1]]);
    expect(h.calls.filter((c) => c.startsWith('init-producer')).sort()).toEqual([
      'init-producer 0',
      'init-producer 1',
      'init-producer 1',
    ]);
    expect(await failuresOf(h, 'store')).toBe(1);
  });

  it('a task revoked mid-restore leaves the restore; the other task reaches RUNNING', async () => {
    h.ends.set(0, 40n);
    h.ends.set(1, 40n);
    const wanted: boolean[] = [];
    let releaseTask1!: () => void;
    const task0Revoked = new Promise<void>((resolve) => (releaseTask1 = resolve));
    h.restoreWith.value = async (request) => {
      if (request.from.has(0)) {
        request.apply(0, [record('k0')], 20n);
        h.lifecycle.onAssignment('member-a', [1]); // task 0 moves away mid-restore
        wanted.push(request.wanted(0));
        releaseTask1();
        return { records: 1, failed: new Map() };
      }
      await task0Revoked; // task 1's restore runs on while task 0 leaves its own
      wanted.push(request.wanted(1));
      request.apply(1, [record('k1')], 40n);
      return { records: 1, failed: new Map() };
    };
    h.lifecycle.onAssignment('member-a', [0, 1]);
    await until(() => h.lifecycle.stateOf(1) === 'RUNNING' && h.calls.includes('remove-store 0'), 'task 1 to run');
    expect(wanted).toEqual([false, true]);
    expect(h.lifecycle.stateOf(0)).toBeUndefined();
    expect(h.lifecycle.read('k1')?.task).toBe(1);
    expect(h.calls.filter((c) => c === 'restore')).toHaveLength(2); // one per task, none again
    expect(await failuresOf(h, 'store')).toBe(0);
  });

  describe('tasks entering together enter each on its own', () => {
    it("one task's unstable offsets do not hold back another: it runs and folds; the held task fails alone and recovers", async () => {
      // Task 0's stable read waits on an earlier owner's open transaction (v2: the require_stable
      // read inside initProducer), then gives up; its second attempt finds the offsets stable.
      let giveUp!: (err: Error) => void;
      let attempts = 0;
      h.holds.initProducer = (task) => {
        if (task !== 0 || attempts++ > 0) return;
        return new Promise<void>((_, reject) => (giveUp = reject));
      };
      h.lifecycle.onAssignment('member-a', [0, 1]);
      await until(() => h.lifecycle.stateOf(1) === 'RUNNING', 'task 1 to run');
      expect(h.lifecycle.stateOf(0)).toBe('RESTORING');
      const task1 = h.lifecycle.runningTask(1)!;
      expect(await task1.foldBatch({ topic: EVENTS, partition: 1, messages: [signUp(3, 'b1')], lastOffset: '3' })).toBe(
        '3',
      );
      await until(() => task1.read('b1') !== undefined, 'task 1 to commit what it folded');
      expect(h.lifecycle.stateOf(0)).toBe('RESTORING'); // still held: nothing of it was read past the fence

      giveUp(Object.assign(new Error('offsets still unstable after 90000 ms (injected)'), { retriable: true }));
      await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to recover');
      expect(await failuresOf(h, 'restore')).toBe(1);
      expect(h.calls.filter((c) => c === 'init-producer 0')).toHaveLength(2);
      // Task 1 was neither failed nor entered again.
      expect(h.calls.filter((c) => c === 'init-producer 1')).toHaveLength(1);
      expect(h.calls.filter((c) => c === 'resume 1')).toHaveLength(1);
      expect(h.lifecycle.runningTask(1)).toBe(task1);
      expect(h.lifecycle.read('b1')).toMatchObject({ task: 1, entity: { version: 1 } });
    });

    it("one task's changelog end that never settles fails only that task", async () => {
      let attempts = 0;
      h.holds.changelogEnds = async (task) => {
        if (task === 0 && attempts++ === 0) {
          await new Promise((r) => setTimeout(r, 30));
          throw Object.assign(new Error('a transaction still holds partition(s) 0 (injected)'), {
            code: 'CHANGELOG_NOT_SETTLED',
          });
        }
      };
      h.lifecycle.onAssignment('member-a', [0, 1]);
      await until(() => h.lifecycle.stateOf(1) === 'RUNNING', 'task 1 to run');
      expect(h.lifecycle.stateOf(0)).toBe('RESTORING'); // its end is still being waited for
      await until(() => h.lifecycle.allRunning, 'task 0 to recover');
      expect(await failuresOf(h, 'restore')).toBe(1);
      expect(h.calls.filter((c) => c === 'init-producer 0')).toHaveLength(2);
      expect(h.calls.filter((c) => c === 'init-producer 1')).toHaveLength(1);
      expect(h.calls.filter((c) => c === 'restore')).toHaveLength(2); // one per task: task 0 restored only once its end was read
    });

    it("one task's failing offset read fails only that task", async () => {
      let attempts = 0;
      h.holds.committedOffsets = (task) => {
        if (task === 1 && attempts++ === 0) throw new Error('fetching offsets failed (injected)');
      };
      h.lifecycle.onAssignment('member-a', [0, 1]);
      await until(() => h.lifecycle.allRunning, 'both tasks to run');
      expect(await failuresOf(h, 'restore')).toBe(1);
      expect(h.calls.filter((c) => c === 'init-producer 0')).toHaveLength(1);
      expect(h.calls.filter((c) => c === 'init-producer 1')).toHaveLength(2);
      expect(h.calls.filter((c) => c === 'resume 0')).toHaveLength(1);
    });
  });

  it('a pause that throws on assignment (inside the GROUP_JOIN listener) fails the task, which recovers', async () => {
    let left = 1;
    h.faults.pause = (task) => task === 1 && left-- > 0;
    expect(() => h.lifecycle.onAssignment('member-a', [0, 1])).not.toThrow();
    await until(() => h.lifecycle.allRunning, 'both tasks to run');
    expect(await failuresOf(h, 'restore')).toBe(1);
    expect(h.calls.filter((c) => c === 'init-producer 1')).toHaveLength(1);
  });

  it('a seek that throws when a new generation re-seeks a RUNNING task fails it, and it re-enters', async () => {
    h.lifecycle.onAssignment('member-a', [0], 1);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    let left = 1;
    h.faults.seek = () => left-- > 0;
    expect(() => h.lifecycle.onAssignment('member-a', [0], 2)).not.toThrow();
    await until(
      () => h.lifecycle.stateOf(0) === 'RUNNING' && h.calls.filter((c) => c === 'init-producer 0').length === 2,
      're-entry',
    );
    expect(await failuresOf(h, 'restore')).toBe(1);
  });

  it.each([
    ['a new member id (evicted, or a replaced consumer)', 'member-b', 2],
    ['a skipped generation', 'member-a', 3],
  ])(
    'a RUNNING task assigned again after %s is restored again, not resumed: another member may have owned it meanwhile',
    async (_why, member, generation) => {
      h.lifecycle.onAssignment('member-a', [0], 1);
      await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
      h.lifecycle.onAssignment(member, [0], generation);
      await until(
        () => h.lifecycle.stateOf(0) === 'RUNNING' && h.calls.filter((c) => c === 'init-producer 0').length === 2,
        'restored again',
      );
      expect(await failuresOf(h, 'fenced')).toBe(1);
    },
  );

  it('a RUNNING task assigned again in the next generation to the same member resumes where it was', async () => {
    h.lifecycle.onAssignment('member-a', [0], 1);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    h.lifecycle.onAssignment('member-a', [0], 2);
    expect(h.lifecycle.stateOf(0)).toBe('RUNNING');
    expect(h.calls.filter((c) => c === 'init-producer 0')).toHaveLength(1);
    expect(await failuresOf(h, 'fenced')).toBe(0);
  });

  it('a task entering again waits for its own commit in flight to settle before it reads anything from Kafka', async () => {
    h.lifecycle.onAssignment('member-a', [0], 1);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    let release!: () => void;
    h.commitGate.value = new Promise<void>((resolve) => (release = resolve));
    const task = h.lifecycle.runningTask(0)!;
    await task.foldBatch({ topic: EVENTS, partition: 0, messages: [signUp(7, 'k1')], lastOffset: '7' });
    await until(() => h.calls.includes('offsets 0'), 'the commit to be in flight');
    h.calls.length = 0;
    h.lifecycle.onAssignment('member-b', [0], 2); // rejoined as a new member: fenced, entered again
    await new Promise((r) => setTimeout(r, 50));
    expect(h.lifecycle.stateOf(0)).toBe('RESTORING');
    try {
      // No producer, no offsets, no changelog end yet: the commit has not answered.
      expect(h.calls.filter((c) => !c.startsWith('pause') && !c.startsWith('disconnect'))).toEqual([]);
    } finally {
      release();
    }
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run again');
    expect(h.calls.indexOf('commit 0')).toBeLessThan(h.calls.indexOf('init-producer 0'));
    expect(h.calls.indexOf('init-producer 0')).toBeLessThan(h.calls.indexOf('changelog-end'));
  });
});

describe('exactly-once v2: a kept task whose transaction the group refused resumes without a restore (issue 31.5)', () => {
  let h: Harness;
  let committer: InstanceCommitter;
  /** What each sendOffsets carried: the generation and the events offset. */
  let offsets: Array<{ generationId?: number; events: string }>;
  /** While set, sendOffsets throws it (after waiting for `gate`). */
  let refusal: unknown;
  let gate: Promise<void> | undefined;

  function v2(resumeWaitMs = 60_000): Harness {
    offsets = [];
    refusal = undefined;
    gate = undefined;
    const tx = {
      sendBatch: async ({ topicMessages }: { topicMessages: Array<{ topic: string; messages: Message[] }> }) =>
        topicMessages.map((t) => ({
          topicName: t.topic,
          partition: t.messages[0]!.partition ?? 0,
          errorCode: 0,
          baseOffset: '100',
        })),
      sendOffsets: async (o: {
        generationId?: number;
        topics: Array<{ topic: string; partitions: Array<{ offset: string }> }>;
      }) => {
        await gate;
        if (refusal) throw refusal;
        offsets.push({
          generationId: o.generationId,
          events: o.topics.find((t) => t.topic === EVENTS)!.partitions[0]!.offset,
        });
      },
      commit: async () => undefined,
      abort: async () => undefined,
    };
    const producer = { transaction: async () => tx, disconnect: async () => undefined } as unknown as Producer;
    const made = harness({
      resumeWaitMs,
      commits: (metrics) =>
        (committer = new InstanceCommitter({
          createProducer: async () => producer,
          groupId: 'group',
          topics: { changelog: 'changelog', results: 'results', deadLetter: 'dlq' },
          intervalMs: 1,
          transactionTimeoutMs: 60_000,
          logger: pino({ level: 'silent' }),
          metrics,
          onFenced: () => undefined,
        })),
    });
    void committer.start(made.lifecycle);
    return made;
  }

  afterEach(async () => {
    await committer.stop();
    await h.lifecycle.closeAll();
    rmSync(h.dir, { recursive: true, force: true });
  });

  const stale = () => Object.assign(new Error('The generation is stale'), { type: 'ILLEGAL_GENERATION' });
  const resumes = async () => (await h.metrics.taskResumes.get()).values[0]?.value ?? 0;
  const fold = (offset: number, key: string) =>
    h.lifecycle
      .runningTask(0)!
      .foldBatch({ topic: EVENTS, partition: 0, messages: [signUp(offset, key)], lastOffset: String(offset) });

  it('resumes from its last commit when the next generation keeps it: no fence, no restore, no offset read', async () => {
    h = v2();
    h.lifecycle.onAssignment('member-a', [0], 1);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    await fold(7, 'k1');
    await until(() => offsets.length === 1, 'the first commit');
    refusal = stale();
    await fold(8, 'k2');
    await until(() => h.lifecycle.stateOf(0) === 'FAILED', 'the refused transaction to fail the task');
    expect(await failuresOf(h, 'commit')).toBe(1);
    h.calls.length = 0;
    refusal = undefined;
    h.lifecycle.onAssignment('member-a', [0], 2);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to resume');
    // Straight back to where its last commit left the inputs; nothing read from Kafka.
    expect(h.calls).toEqual(['pause 0', `seek ${EVENTS} 0 8`, `seek ${COMMANDS} 0 2`, 'resume 0']);
    expect(await resumes()).toBe(1);
    await fold(8, 'k2'); // the refused unit's record again, committed under the new generation
    await until(() => offsets.length === 2, 'the commit after the resume');
    expect(offsets).toEqual([
      { generationId: 1, events: '8' },
      { generationId: 2, events: '9' },
    ]);
    expect(h.lifecycle.runningTask(0)!.read('k2')).toBeDefined();
  });

  it('resumes at once when the assignment that kept it arrived while the refused transaction was answering', async () => {
    h = v2();
    h.lifecycle.onAssignment('member-a', [0], 1);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    let release!: () => void;
    gate = new Promise<void>((resolve) => (release = resolve));
    refusal = stale();
    await fold(7, 'k1');
    await until(() => h.lifecycle.runningTask(0)!.uncommitted === 1 && committer !== undefined, 'the unit in flight');
    await new Promise((r) => setTimeout(r, 20)); // sendOffsets under generation 1 is waiting on the gate
    h.lifecycle.onAssignment('member-a', [0], 2); // kept: RUNNING, so only re-seeked
    h.calls.length = 0;
    release();
    await until(() => h.calls.includes('resume 0'), 'task 0 to resume');
    expect(h.lifecycle.stateOf(0)).toBe('RUNNING');
    expect(h.calls.filter((c) => /restore|changelog-end|committed-offsets|init-producer/.test(c))).toEqual([]);
    expect(h.calls).toContain(`seek ${EVENTS} 0 7`); // the committed position: the refused unit is folded again
    expect(await resumes()).toBe(1);
  });

  it('enters the long way (fence, restore, offset read) when it comes back under another member id', async () => {
    h = v2();
    h.lifecycle.onAssignment('member-a', [0], 1);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    refusal = stale();
    await fold(7, 'k1');
    await until(() => h.lifecycle.stateOf(0) === 'FAILED', 'the refused transaction to fail the task');
    refusal = undefined;
    h.calls.length = 0;
    h.lifecycle.onAssignment('member-b', [0], 2); // evicted and back: another member may have owned it
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run again');
    expect(h.calls).toEqual(
      expect.arrayContaining(['init-producer 0', 'changelog-end', 'restore', 'committed-offsets']),
    );
    expect(await resumes()).toBe(0);
  });

  it('enters the long way when no assignment comes within resumeWaitMs', async () => {
    h = v2(30);
    h.lifecycle.onAssignment('member-a', [0], 1);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    refusal = stale();
    await fold(7, 'k1');
    await until(() => h.lifecycle.stateOf(0) === 'FAILED', 'the refused transaction to fail the task');
    refusal = undefined;
    h.calls.length = 0;
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run again');
    expect(h.calls).toEqual(expect.arrayContaining(['ownership 0', 'init-producer 0', 'restore', 'committed-offsets']));
    expect(await resumes()).toBe(0);
  });

  it('a transaction that failed for another reason (an unknown outcome) is never resumed from memory', async () => {
    h = v2();
    h.lifecycle.onAssignment('member-a', [0], 1);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    refusal = Object.assign(new Error('timed out'), { type: 'REQUEST_TIMED_OUT' });
    await fold(7, 'k1');
    await until(() => h.calls.includes('restore') && h.lifecycle.stateOf(0) !== 'FAILED', 'the long way back');
    expect(await resumes()).toBe(0);
  });
});

describe('the command share pauses the commands partition alone (issue 32.2)', () => {
  let h: Harness;
  beforeEach(() => {
    // COMMIT_MAX_RECORDS 1000: a unit takes 10 commands; back-pressure at 1000 uncommitted records.
    h = harness(undefined, { commandShare: 0.01, maxUncommittedRecords: 1000 });
  });
  afterEach(async () => {
    await h.lifecycle.closeAll();
    rmSync(h.dir, { recursive: true, force: true });
  });

  const batchOf = (topic: string, from: number, count: number) => ({
    topic,
    partition: 0,
    messages: Array.from({ length: count }, (_, i) => signUp(from + i, `k${from + i}`)),
    lastOffset: String(from + count - 1),
  });

  it('back-pressure ending does not resume it, the unit holding it committing does; a new generation pauses it again', async () => {
    h.lifecycle.onAssignment('member-a', [0], 1);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    const task = h.lifecycle.runningTask(0)!;
    let release!: () => void;
    h.commitGate.value = new Promise<void>((resolve) => (release = resolve));
    h.calls.length = 0;

    // A full unit of events commits (held at the gate) and 1000 uncommitted records pause both partitions.
    expect(await task.foldBatch(batchOf(EVENTS, 7, 1000))).toBe('1006');
    await until(() => h.calls.includes('pause 0'), 'back-pressure');
    // Commands fetched in the same round: 10 of them, then the commands partition pauses alone.
    expect(await task.foldBatch(batchOf(COMMANDS, 2, 25))).toBe('11');
    expect(h.calls).toContain(`pause ${COMMANDS} 0`);
    expect(task.commandsHeld).toBe(true);

    // A replacement consumer (same member, next generation) knows nothing of the pauses.
    h.calls.length = 0;
    h.lifecycle.onAssignment('member-a', [0], 2);
    expect(h.calls).toContain('pause 0'); // back-pressure's pause covers both partitions

    h.calls.length = 0;
    h.commitGate.value = undefined;
    release();
    await until(() => h.calls.includes(`resume ${COMMANDS} 0`), 'the commands partition to resume');
    // Back-pressure ended before the held unit committed: only the events partition resumed then.
    expect(h.calls.indexOf(`resume ${EVENTS} 0`)).toBeGreaterThanOrEqual(0);
    expect(h.calls.indexOf(`resume ${EVENTS} 0`)).toBeLessThan(h.calls.indexOf(`resume ${COMMANDS} 0`));
    expect(h.calls).not.toContain('resume 0');
    expect(task.commandsHeld).toBe(false);
    expect(await h.metrics.commandSharePauses.get()).toMatchObject({ values: [{ value: 1 }] });
  });

  it('a new generation re-applies a pause of the commands partition alone', async () => {
    h.lifecycle.onAssignment('member-a', [0], 1);
    await until(() => h.lifecycle.stateOf(0) === 'RUNNING', 'task 0 to run');
    const task = h.lifecycle.runningTask(0)!;
    h.commitGate.value = new Promise<void>(() => undefined); // the held unit never commits in this test
    // COMMIT_INTERVAL_MS is 1 here: the first 10 commit on the interval, the next 10 reach the share.
    expect(await task.foldBatch(batchOf(COMMANDS, 2, 25))).toBe('21');
    expect(task.commandsHeld).toBe(true);
    h.calls.length = 0;
    h.lifecycle.onAssignment('member-a', [0], 2);
    expect(h.calls).toEqual([`seek ${EVENTS} 0 7`, `seek ${COMMANDS} 0 22`, `pause ${COMMANDS} 0`]);
    h.commitGate.value = undefined;
  });
});

describe('kept state (STATE_CLEANUP_DELAY_MS)', () => {
  const DELAY_MS = 300;
  let h: Harness;
  beforeEach(() => {
    h = harness(undefined, { cleanupDelayMs: DELAY_MS });
    h.ends.set(0, 20n);
    h.restoreBatches.push({ task: 0, records: [record('k0')], next: 20n });
  });
  afterEach(async () => {
    await h.lifecycle.closeAll();
    rmSync(h.dir, { recursive: true, force: true });
  });
  const restoresOf = (task: number) => h.restoreFrom.filter((from) => from.has(task)).map((from) => from.get(task));

  it('a revoked task keeps its store file; back within the delay, it restores from its checkpoint and the file stays', async () => {
    h.lifecycle.onAssignment('member-a', [0, 1]);
    await until(() => h.lifecycle.allRunning, 'both tasks to run');
    h.lifecycle.onAssignment('member-a', [1]);
    expect(h.lifecycle.stateOf(0)).toBeUndefined();
    expect(h.lifecycle.held()).toEqual({
      owned: [1],
      stores: [
        [0, 20], // closed: its checkpoint read from the file
        [1, -1], // open, nothing committed yet
      ],
    });
    h.restoreBatches.length = 0; // nothing new in the changelog meanwhile
    h.lifecycle.onAssignment('member-a', [0, 1]);
    await until(() => h.lifecycle.allRunning, 'both tasks to run again');
    expect(restoresOf(0)).toEqual([null, 20n]); // the first entry rebuilt it; the return read only the tail
    expect(h.lifecycle.read('k0')?.task).toBe(0);
    await new Promise((r) => setTimeout(r, DELAY_MS + 150));
    expect(h.calls).not.toContain('remove-store 0');
    expect(TaskStore.tasksIn(h.dir)).toEqual([0, 1]);
  });

  it('deletes a kept store file once the delay has passed without the task coming back', async () => {
    h.lifecycle.onAssignment('member-a', [0, 1]);
    await until(() => h.lifecycle.allRunning, 'both tasks to run');
    const revokedAt = Date.now();
    h.lifecycle.onAssignment('member-a', [1]);
    await until(() => h.calls.includes('remove-store 0'), 'the kept store to be deleted');
    expect(Date.now() - revokedAt).toBeGreaterThanOrEqual(DELAY_MS - 20);
    expect(TaskStore.tasksIn(h.dir)).toEqual([1]);
    expect(h.lifecycle.held()).toEqual({ owned: [1], stores: [[1, -1]] });
  });

  it('a store file an earlier run left for a task not assigned now is published, then deleted after the delay', async () => {
    TaskStore.open({ dir: h.dir, task: 5 }).close();
    h.lifecycle.onAssignment('member-a', [1]);
    expect(h.lifecycle.held()).toEqual({ owned: [1], stores: [[5, -1]] }); // task 1's store opens as it enters
    await until(() => h.calls.includes('remove-store 5'), 'the left-over store to be deleted');
    expect(TaskStore.tasksIn(h.dir)).toEqual([1]);
  });
});
