import { encodeStoredEntity, seenOf } from '@state-relay/contracts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  StoreBusyError,
  StoreClosedError,
  StoreCorruptRowError,
  StoreErrorCodes,
  StoreInvalidArgumentError,
  StoreSchemaMismatchError,
  TaskStore,
  type StoredEntity,
} from '../src';
import { TmpDir } from './tmp-dir';

const entity = (version: number, value: Record<string, unknown> = {}, commandIds: string[] = []): StoredEntity => ({
  version,
  value,
  seen: seenOf(commandIds),
});

describe('TaskStore', () => {
  let tmp: TmpDir;
  const open = (task = 0) => tmp.track(TaskStore.open({ dir: tmp.path, task }));

  beforeEach(() => {
    tmp = new TmpDir();
  });
  afterEach(() => tmp.cleanup());

  it('lists the task stores in a directory, and peeks at a store file’s checkpoint without opening it as a store', () => {
    expect(TaskStore.tasksIn(join(tmp.path, 'absent'))).toEqual([]);
    const a = open(12);
    a.commit([['k', entity(1)]], '41', 1);
    const b = open(3);
    expect(TaskStore.tasksIn(tmp.path)).toEqual([3, 12]);
    expect(TaskStore.peekCheckpoint({ dir: tmp.path, task: 12 })).toBe(41); // open elsewhere: a WAL reader
    a.close();
    b.close();
    expect(TaskStore.peekCheckpoint({ dir: tmp.path, task: 12 })).toBe(41);
    expect(TaskStore.peekCheckpoint({ dir: tmp.path, task: 3 })).toBe(-1); // nothing committed
    expect(TaskStore.peekCheckpoint({ dir: tmp.path, task: 4 })).toBe(-1); // no file
    expect(TaskStore.tasksIn(tmp.path)).toEqual([3, 12]); // peeking created nothing
  });

  it('keeps one WAL-mode file per task at <dir>/task-<n>.sqlite', () => {
    const store = open(7);
    expect(store.path).toBe(join(tmp.path, 'task-7.sqlite'));
    expect(existsSync(store.path)).toBe(true);
    const raw = new Database(store.path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
  });

  it('starts empty with no checkpoint', () => {
    const store = open();
    expect(store.checkpoint()).toBeNull();
    expect(store.count()).toBe(0);
    expect(store.get('a')).toBeUndefined();
  });

  it('commits puts and the checkpoint together, and both survive a reopen', () => {
    const store = open();
    const a = entity(1, { status: 'active', balance: 10, nested: { x: [1, 2] } }, ['cmd-1']);
    store.commit(
      [
        ['a', a],
        ['b', entity(3)],
      ],
      '42',
    );
    store.close();

    const reopened = open();
    expect(reopened.checkpoint()).toBe('42');
    expect(reopened.count()).toBe(2);
    expect(reopened.get('a')).toEqual(a);
    expect(reopened.get('b')).toEqual(entity(3));
  });

  it('a later put replaces the row and a null change deletes it', () => {
    const store = open();
    store.commit(
      [
        ['a', entity(1, { n: 1 })],
        ['b', entity(1)],
      ],
      '2',
    );
    store.commit(
      [
        ['a', entity(2, { n: 2 })],
        ['b', null],
        ['never-existed', null],
      ],
      '5',
    );
    expect(store.get('a')).toEqual(entity(2, { n: 2 }));
    expect(store.get('b')).toBeUndefined();
    expect(store.count()).toBe(1);
    expect(store.checkpoint()).toBe('5');
  });

  it('an iterator that throws mid-commit leaves neither rows nor checkpoint changed', () => {
    const store = open();
    store.commit([['a', entity(1, { n: 1 })]], '10');
    const boom = new Error('aggregate blew up');
    function* changes(): Generator<[string, StoredEntity | null]> {
      yield ['a', entity(2, { n: 2 })];
      yield ['b', entity(1)];
      throw boom;
    }
    expect(() => store.commit(changes(), '20')).toThrow(boom);
    expect(store.get('a')).toEqual(entity(1, { n: 1 }));
    expect(store.get('b')).toBeUndefined();
    expect(store.checkpoint()).toBe('10');
  });

  it('an invalid entity mid-commit rolls back the whole commit', () => {
    const store = open();
    const bad = { version: 1.5, value: {}, seen: '' } as StoredEntity;
    expect(() =>
      store.commit(
        [
          ['a', entity(1)],
          ['b', bad],
        ],
        '3',
      ),
    ).toThrow(StoreInvalidArgumentError);
    expect(store.count()).toBe(0);
    expect(store.checkpoint()).toBeNull();
  });

  it.each(['', '-1', '1.5', '01', 'abc', '9223372036854775808'])('refuses the checkpoint %p', (checkpoint) => {
    const store = open();
    expect(() => store.commit([['a', entity(1)]], checkpoint)).toThrow(StoreInvalidArgumentError);
    expect(store.count()).toBe(0);
  });

  it('keeps int64 checkpoints exact, beyond what a double can hold', () => {
    const store = open();
    store.commit([], '9223372036854775807');
    expect(store.checkpoint()).toBe('9223372036854775807');
    store.commit([], '9007199254740993');
    expect(store.checkpoint()).toBe('9007199254740993');
  });

  it('keysAfter pages through every entity in key order', () => {
    const store = open();
    const keys = Array.from({ length: 25 }, (_, i) => `k${String(i).padStart(3, '0')}`);
    store.commit(
      [...keys].reverse().map((k, i): [string, StoredEntity] => [k, entity(i)]),
      '1',
    );
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page = store.keysAfter(after, 4);
      if (page.length === 0) break;
      for (const [key, value] of page) {
        seen.push(key);
        expect(value).toEqual(store.get(key));
      }
      after = page[page.length - 1]![0];
    }
    expect(seen).toEqual(keys);
  });

  it('wipe drops every row and the checkpoint', () => {
    const store = open();
    store.commit(
      [
        ['a', entity(1)],
        ['b', entity(1)],
      ],
      '100',
    );
    store.wipe();
    expect(store.count()).toBe(0);
    expect(store.checkpoint()).toBeNull();
    store.close();
    expect(open().checkpoint()).toBeNull();
  });

  it('reports its size on disk, including the WAL', () => {
    const store = open();
    const before = store.sizeBytes();
    store.commit(
      Array.from({ length: 500 }, (_, i): [string, StoredEntity] => [`k${i}`, entity(1, { pad: 'x'.repeat(200) })]),
      '1',
    );
    expect(store.sizeBytes()).toBeGreaterThan(before + 500 * 200);
  });

  it('close is idempotent and later use fails with STORE_CLOSED', () => {
    const store = open();
    store.close();
    store.close();
    expect(() => store.get('a')).toThrow(StoreClosedError);
    let caught: unknown;
    try {
      store.commit([], '1');
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: StoreErrorCodes.CLOSED, retriable: false });
    expect(existsSync(`${store.path}-wal`)).toBe(false);
  });

  it('a commit blocked by another writer past the busy timeout fails retriably and changes nothing', () => {
    const store = tmp.track(TaskStore.open({ dir: tmp.path, task: 0, busyTimeoutMs: 50 }));
    store.commit([['a', entity(1)]], '1');
    const other = new Database(store.path);
    other.exec('BEGIN IMMEDIATE');
    try {
      let caught: unknown;
      try {
        store.commit([['a', entity(2)]], '2');
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(StoreBusyError);
      expect(caught).toMatchObject({ code: StoreErrorCodes.BUSY, retriable: true });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(store.get('a')).toEqual(entity(1));
    expect(store.checkpoint()).toBe('1');
    store.commit([['a', entity(2)]], '2');
    expect(store.checkpoint()).toBe('2');
  });

  it('refuses a file written by a newer schema', () => {
    const store = open();
    store.close();
    const raw = new Database(store.path);
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => TaskStore.open({ dir: tmp.path, task: 0 })).toThrow(StoreSchemaMismatchError);
  });

  it('names a row that does not decode', () => {
    const store = open();
    store.commit([['a', entity(1)]], '1');
    const raw = new Database(store.path);
    raw.prepare('UPDATE entities SET record = \'{"version":1,"value":{}}\' WHERE key = \'a\'').run();
    raw.close();
    expect(() => store.get('a')).toThrow(StoreCorruptRowError);
  });

  it('refuses record bytes that are not JSON, rolling back the whole commit', () => {
    const store = open();
    store.commit([['a', entity(1)]], '1');
    expect(() =>
      store.commit(
        [
          ['b', encodeStoredEntity(entity(1))],
          [Buffer.from('c'), Buffer.from('{not json')],
        ],
        '3',
      ),
    ).toThrow(StoreCorruptRowError);
    expect([store.get('b'), store.checkpoint()]).toEqual([undefined, '1']);
  });

  it('stores record bytes as they are and reads them back decoded', () => {
    const store = open();
    const bytes = encodeStoredEntity({ version: 4, value: { n: 1 }, seen: seenOf(['x']) });
    store.commit([[Buffer.from('k', 'utf8'), bytes]], '9');
    expect(store.get('k')).toEqual({ version: 4, value: { n: 1 }, seen: seenOf(['x']) });
    const raw = new Database(store.path, { readonly: true });
    expect(raw.prepare("SELECT record FROM entities WHERE key = 'k'").pluck().get()).toBe(bytes.toString('utf8'));
    raw.close();
  });

  it('drops the rows and checkpoint of a store written in the first format, so restore rebuilds it', () => {
    const path = join(tmp.path, 'task-0.sqlite');
    const raw = new Database(path);
    raw.exec(`CREATE TABLE entities (key TEXT PRIMARY KEY, version INTEGER NOT NULL, value TEXT NOT NULL, command_ids TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE meta (name TEXT PRIMARY KEY, value) WITHOUT ROWID;
      INSERT INTO entities VALUES ('old', 3, '{"a":1}', '[]'); INSERT INTO meta VALUES ('changelog_offset', 40);
      PRAGMA user_version = 1;`);
    raw.close();
    const store = tmp.track(TaskStore.open({ dir: tmp.path, task: 0 }));
    expect([store.rebuiltFrom, store.checkpoint(), store.count(), store.get('old')]).toEqual([1, null, 0, undefined]);
  });

  it('refuses a bad task number', () => {
    expect(() => TaskStore.open({ dir: tmp.path, task: -1 })).toThrow(StoreInvalidArgumentError);
    expect(() => TaskStore.open({ dir: tmp.path, task: 1.5 })).toThrow(StoreInvalidArgumentError);
  });

  it('records when it last matched the changelog end, with a commit or on its own; wipe forgets it', () => {
    const store = open(2);
    expect(store.syncedAt()).toBeNull();
    store.commit([['a', entity(1)]], '4'); // a restore chunk: not yet at the end
    expect(store.syncedAt()).toBeNull();
    store.commit([['b', entity(1)]], '6', 1_700_000_000_000);
    expect(store.syncedAt()).toBe(1_700_000_000_000);
    store.markSynced(1_700_000_000_500);
    expect(store.syncedAt()).toBe(1_700_000_000_500);
    expect(() => store.commit([], '7', 1.5)).toThrow(StoreInvalidArgumentError);
    store.wipe();
    expect(store.syncedAt()).toBeNull();
  });

  it('a rebuild records its start with the wipe, keeps it across batches and reopen, and ends when synced', () => {
    const store = open(4);
    store.commit([['stale', entity(1)]], '9', 1_700_000_000_000);
    store.wipe(1_700_000_001_000);
    expect([store.count(), store.checkpoint(), store.syncedAt(), store.rebuildStartedAt()]).toEqual([
      0,
      null,
      null,
      1_700_000_001_000,
    ]);
    store.commit([['a', entity(1)]], '4'); // a restore batch
    store.close();
    const reopened = tmp.track(TaskStore.open({ dir: tmp.path, task: 4 }));
    expect([reopened.checkpoint(), reopened.rebuildStartedAt()]).toEqual(['4', 1_700_000_001_000]);
    reopened.markSynced(1_700_000_002_000);
    expect([reopened.syncedAt(), reopened.rebuildStartedAt()]).toEqual([1_700_000_002_000, null]);
    expect(() => reopened.wipe(1.5)).toThrow(StoreInvalidArgumentError);
    reopened.wipe();
    expect(reopened.rebuildStartedAt()).toBeNull();
  });

  it('remove deletes a closed task store with its WAL, so a later open starts empty', () => {
    const store = open(3);
    store.commit([['a', entity(1)]], '1', Date.now());
    const path = store.path;
    store.close();
    TaskStore.remove({ dir: tmp.path, task: 3 });
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}-wal`)).toBe(false);
    const again = open(3);
    expect(again.checkpoint()).toBeNull();
    expect(again.get('a')).toBeUndefined();
  });

  describe('input positions', () => {
    const positions = (events: bigint, commands?: bigint) =>
      new Map<string, bigint>([
        ['events', events],
        ...(commands === undefined ? [] : [['commands', commands] as const]),
      ]);

    it('are recorded with the rows and the checkpoint, survive a reopen, and only ever rise', () => {
      const store = open();
      expect(store.inputPositions()).toEqual(new Map());
      store.commit([['a', entity(1)]], '3', undefined, positions(10n, 4n));
      store.commit([['b', entity(1)]], '5', undefined, positions(8n)); // an older record read later: ignored
      store.commit([['c', entity(1)]], '7', undefined, new Map([['commands', 9n]]));
      store.close();
      const reopened = open();
      expect(reopened.inputPositions()).toEqual(positions(10n, 9n));
      expect(reopened.checkpoint()).toBe('7');
    });

    it('keep int64 offsets exact', () => {
      const store = open();
      store.commit([], '1', undefined, positions(9223372036854775807n));
      expect(store.inputPositions().get('events')).toBe(9223372036854775807n);
    });

    it('a commit that fails changes neither rows, checkpoint nor positions', () => {
      const store = open();
      store.commit([['a', entity(1)]], '3', undefined, positions(10n));
      expect(() => store.commit([['b', Buffer.from('not json')]], '5', undefined, positions(20n))).toThrow(
        StoreCorruptRowError,
      );
      expect([store.checkpoint(), store.get('b'), store.inputPositions()]).toEqual(['3', undefined, positions(10n)]);
    });

    it('refuses a bad position before writing anything', () => {
      const store = open();
      expect(() => store.commit([['a', entity(1)]], '3', undefined, positions(-1n))).toThrow(StoreInvalidArgumentError);
      expect(() => store.commit([['a', entity(1)]], '3', undefined, new Map([['', 1n]]))).toThrow(
        StoreInvalidArgumentError,
      );
      expect(store.count()).toBe(0);
    });

    it('go with the rows: wipe forgets them', () => {
      const store = open();
      store.commit([['a', entity(1)]], '3', Date.now(), positions(10n, 4n));
      store.wipe();
      expect(store.inputPositions()).toEqual(new Map());
    });
  });
});
