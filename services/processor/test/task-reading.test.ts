import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeEvent, type StoredEntity } from '@state-relay/contracts';
import type { EntityDomain } from '@state-relay/domain';
import { TaskStore } from '@state-relay/store';
import Database from 'better-sqlite3';
import type { KafkaMessage } from 'kafkajs';
import pino from 'pino';
import { createProcessorMetrics } from '../src/metrics';
import type { TaskFailure } from '../src/tasks/errors';
import { Task } from '../src/tasks/task';
import { counterDomain } from './counter-domain';

// Task.foldFrom folds each slice (FOLD_SLICE = 500 records) with its reads in one SQLite read
// transaction (TaskStore.reading): one snapshot per slice, released before the next yield; a
// store failure fails the task as kind 'store', as before.

const SLICE = 500;
const topics = { events: 'events', commands: 'commands', results: 'results', deadLetter: 'dlq', changelog: 'cl' };

interface Setup {
  task: Task;
  store: TaskStore;
  /** Another connection to the task's file: what it commits, the task's open snapshot does not see. */
  other: TaskStore;
  failures: TaskFailure[];
}

let dir: string;
const opened: TaskStore[] = [];
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'task-reading-'))));
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function setup(domain: EntityDomain = counterDomain): Setup {
  const store = TaskStore.open({ dir, task: 0 });
  const other = TaskStore.open({ dir, task: 0 });
  opened.push(store, other);
  const failures: TaskFailure[] = [];
  const task = new Task(0, {
    domain,
    topics,
    groupId: 'g',
    logger: pino({ level: 'silent' }),
    metrics: createProcessorMetrics(),
    commitIntervalMs: 60_000,
    commitMaxRecords: 100_000,
    maxUncommittedRecords: 1_000_000,
    pause: () => undefined,
    resume: () => undefined,
    onFailure: (t, failure) => {
      failures.push(failure);
      t.fail(failure.kind);
    },
    commits: { commit: () => new Promise(() => undefined), wake: () => undefined }, // nothing commits here
  });
  task.store = store;
  task.transition('RESTORING');
  task.start(new Map());
  return { task, store, other, failures };
}

const added = (offset: number, key: string): KafkaMessage =>
  ({
    key: Buffer.from(key),
    value: encodeEvent({ type: 'added', at: 1, data: { amount: 1 } }),
    offset: String(offset),
    timestamp: '1',
    attributes: 0,
    headers: {},
  }) as KafkaMessage;
const batch = (keys: string[]) => ({
  topic: 'events',
  partition: 0,
  messages: keys.map((k, i) => added(i, k)),
  lastOffset: String(keys.length - 1),
});
const stored = (total: number): StoredEntity => ({ version: 1, value: { total, adds: 1 }, seen: '' });

/** Whether a reader holds an old WAL snapshot: `other` commits, then a TRUNCATE checkpoint reports busy. */
function readerHoldsSnapshot(other: TaskStore, path: string): boolean {
  other.commit([['probe', stored(0)]], '9');
  const db = new Database(path, { timeout: 0 });
  try {
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
    return result!.busy !== 0;
  } finally {
    db.close();
  }
}

describe('Task: the reads of a fold slice share one SQLite snapshot', () => {
  it('reads a slice from one snapshot, held while it folds, and the next slice from a new one', async () => {
    const seen = new Map<string, unknown>();
    const held: boolean[] = [];
    const box: { s?: Setup } = {};
    const domain: EntityDomain = {
      ...counterDomain,
      applyEvent(key, event, current) {
        seen.set(key, current?.['total']);
        if (key === 'hook') {
          // Another connection commits while the first slice folds.
          const s = box.s!;
          s.other.commit(
            [
              ['late', stored(100)],
              ['late-b', stored(200)],
            ],
            '2',
          );
          held.push(readerHoldsSnapshot(s.other, s.store.path));
        }
        return counterDomain.applyEvent(key, event, current);
      },
    };
    const s = (box.s = setup(domain));
    s.store.commit([['hook', stored(1)]], '1');
    // Slice 1: 'hook', 'late' and padding (500 records); slice 2: 'late-b'.
    const keys = ['hook', 'late', ...Array.from({ length: SLICE - 2 }, (_, i) => `pad-${i}`), 'late-b'];
    expect(await s.task.foldBatch(batch(keys))).toBe(String(keys.length - 1)); // the whole batch taken
    expect(s.failures).toEqual([]);
    expect(held).toEqual([true]);
    expect(seen.get('hook')).toBe(1);
    expect(seen.get('late')).toBeUndefined(); // committed after slice 1's snapshot
    expect(seen.get('late-b')).toBe(200); // slice 2: a new snapshot
    expect(readerHoldsSnapshot(s.other, s.store.path)).toBe(false); // released after the slices
  });

  it('fails the task as a store failure when the read transaction cannot begin', async () => {
    const s = setup();
    s.store.close(); // every statement now fails with StoreClosedError
    expect(await s.task.foldBatch(batch(['a']))).toBeUndefined(); // nothing to resolve
    expect(s.failures.map((f) => f.kind)).toEqual(['store']);
    expect(s.task.state).toBe('FAILED');
  });

  it('fails the task as a store failure when a read fails inside the slice, once', async () => {
    const s = setup();
    s.store.commit([['a', stored(1)]], '1');
    jest.spyOn(s.store, 'get').mockImplementation(() => {
      throw new Error('disk I/O error (injected)');
    });
    expect(await s.task.foldBatch(batch(['a', 'b']))).toBeUndefined();
    expect(s.failures.map((f) => f.kind)).toEqual(['store']);
    expect(s.task.state).toBe('FAILED');
  });
});
