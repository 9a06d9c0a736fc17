import Database from 'better-sqlite3';
import { StoreClosedError, StoreInvalidArgumentError, TaskStore, type StoredEntity } from '../src';
import { TmpDir } from './tmp-dir';

// TaskStore.reading: a fold slice's reads in one WAL read transaction (issue 32).

const entity = (version: number): StoredEntity => ({ version, value: { v: version }, seen: '' });

describe('TaskStore.reading', () => {
  let tmp: TmpDir;
  let store: TaskStore;
  let other: TaskStore;

  beforeEach(() => {
    tmp = new TmpDir();
    store = tmp.track(TaskStore.open({ dir: tmp.path, task: 0 }));
    store.commit([['k', entity(1)]], '1');
    other = tmp.track(TaskStore.open({ dir: tmp.path, task: 0 })); // a second connection to the same file
  });
  afterEach(() => tmp.cleanup());

  /** Whether a TRUNCATE checkpoint from another connection is blocked by a reader (busy = 1). */
  const readerHoldsWal = (): boolean => {
    const db = new Database(store.path, { timeout: 0 });
    try {
      other.commit([['other', entity(1)]], '2'); // WAL frames the checkpoint must wait for
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      return result!.busy !== 0;
    } finally {
      db.close();
    }
  };

  it('reads one snapshot: a commit made meanwhile is seen only after the function returns', () => {
    const seen = store.reading(() => {
      const before = store.get('k')?.version;
      other.commit([['k', entity(2)]], '2');
      return [before, store.get('k')?.version];
    });
    expect(seen).toEqual([1, 1]);
    expect(store.get('k')?.version).toBe(2);
  });

  it('holds the snapshot while the function runs and releases it when it returns or throws', () => {
    expect(store.reading(() => (store.get('k'), readerHoldsWal()))).toBe(true);
    expect(readerHoldsWal()).toBe(false);
    expect(() =>
      store.reading(() => {
        store.get('k');
        throw new Error('fold failed');
      }),
    ).toThrow('fold failed');
    expect(readerHoldsWal()).toBe(false);
    store.commit([['k', entity(3)]], '3'); // the store writes as usual afterwards
    expect(store.get('k')?.version).toBe(3);
  });

  it('refuses an async function once its synchronous part ran, holding nothing across the await', async () => {
    let resumed: Promise<void> | undefined;
    expect(() =>
      store.reading(() => {
        resumed = (async () => {
          await Promise.resolve();
          expect(readerHoldsWal()).toBe(false);
        })();
        return resumed;
      }),
    ).toThrow(StoreInvalidArgumentError);
    await resumed;
  });

  it('runs a nested reading inside the outer transaction, and a commit inside one as a savepoint', () => {
    const versions = store.reading(() => {
      const inner = store.reading(() => store.get('k')?.version);
      store.commit([['k', entity(4)]], '4');
      return [inner, store.get('k')?.version];
    });
    expect(versions).toEqual([1, 4]);
    expect(other.get('k')?.version).toBe(4);
  });

  it('fails with a StoreError on a closed store, and survives the function closing the store', () => {
    expect(() => store.reading(() => store.close())).not.toThrow();
    expect(() => store.reading(() => 1)).toThrow(StoreClosedError);
  });
});
