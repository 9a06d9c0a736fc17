import { TaskStore, WriteCache, readThrough, type EntityReader, type StoredEntity } from '../src';
import { TmpDir } from './tmp-dir';

const entity = (version: number, value: Record<string, unknown> = {}): StoredEntity => ({
  version,
  value,
  seen: '',
});

describe('WriteCache', () => {
  it('tells untouched (undefined), deleted (null) and written keys apart', () => {
    const cache = new WriteCache();
    cache.put('a', entity(1));
    cache.delete('b');
    expect(cache.get('a')).toEqual(entity(1));
    expect(cache.get('b')).toBeNull();
    expect(cache.get('c')).toBeUndefined();
  });

  it('keeps only the last write per key, so the changelog carries one record per key', () => {
    const cache = new WriteCache();
    cache.put('a', entity(1));
    cache.put('b', entity(1));
    cache.put('a', entity(2));
    cache.delete('b');
    cache.delete('c');
    cache.put('c', entity(5));
    expect(cache.size).toBe(3);
    expect(new Map(cache.entries())).toEqual(
      new Map([
        ['a', entity(2)],
        ['b', null],
        ['c', entity(5)],
      ]),
    );
  });

  it('clear empties the cache', () => {
    const cache = new WriteCache();
    cache.put('a', entity(1));
    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.get('a')).toBeUndefined();
  });
});

describe('readThrough', () => {
  const store: EntityReader & { reads: string[] } = {
    reads: [],
    get(key) {
      this.reads.push(key);
      return key === 'stored' || key === 'shadowed' ? entity(1, { from: 'store' }) : undefined;
    },
  };
  beforeEach(() => {
    store.reads = [];
  });

  it("returns this batch's write without reading the store", () => {
    const cache = new WriteCache();
    cache.put('shadowed', entity(2, { from: 'cache' }));
    expect(readThrough(cache, store, 'shadowed')).toEqual(entity(2, { from: 'cache' }));
    expect(store.reads).toEqual([]);
  });

  it('treats a key deleted in this batch as absent, even if the store has it', () => {
    const cache = new WriteCache();
    cache.delete('stored');
    expect(readThrough(cache, store, 'stored')).toBeUndefined();
    expect(store.reads).toEqual([]);
  });

  it('falls back to the store for keys this batch has not touched', () => {
    const cache = new WriteCache();
    expect(readThrough(cache, store, 'stored')).toEqual(entity(1, { from: 'store' }));
    expect(readThrough(cache, store, 'missing')).toBeUndefined();
    expect(store.reads).toEqual(['stored', 'missing']);
  });

  it('a flushed batch reads back the same through a real TaskStore', () => {
    const tmp = new TmpDir();
    try {
      const taskStore = tmp.track(TaskStore.open({ dir: tmp.path, task: 1 }));
      taskStore.commit(
        [
          ['gone', entity(1)],
          ['kept', entity(1)],
        ],
        '2',
      );
      const cache = new WriteCache();
      cache.put('kept', entity(2, { n: 1 }));
      cache.put('new', entity(1));
      cache.delete('gone');
      const before = ['kept', 'new', 'gone'].map((k) => readThrough(cache, taskStore, k));

      taskStore.commit(cache.entries(), '5');
      cache.clear();

      expect(['kept', 'new', 'gone'].map((k) => readThrough(cache, taskStore, k))).toEqual(before);
      expect(taskStore.checkpoint()).toBe('5');
    } finally {
      tmp.cleanup();
    }
  });
});
