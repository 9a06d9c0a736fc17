import { encodeStoredEntity } from '@state-relay/contracts';
import { join } from 'node:path';
import { ReplicaStore, StoreInvalidFilterError, type Chunk, type ChunkRequest } from '../src';
import { TmpDir } from './tmp-dir';

const STATUS_IS = "json_extract(record, '$.value.status') = ?";

/** Keys sorted the way SQLite's BINARY collation sorts TEXT: by UTF-8 bytes. */
const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function fill(replica: ReplicaStore, n: number): Map<string, Record<string, unknown>> {
  const values = new Map<string, Record<string, unknown>>();
  const records = [];
  for (let i = 0; i < n; i++) {
    // Keys of varied length and scrambled order, plus non-ASCII ones where UTF-8 and UTF-16 order differ.
    const key =
      i % 50 === 0 ? `acct-\u{1F600}-${i}` : i % 50 === 1 ? `acct-\uFF01-${i}` : `acct-${(i * 7919) % 100_003}`;
    const value = { status: i % 3 === 0 ? 'dormant' : 'active', vip: i % 4 === 0, balance: i };
    values.set(key, value);
    records.push({
      partition: i % 4,
      offset: String(i),
      key,
      value: encodeStoredEntity({ version: 1, value, seen: '' }),
    });
  }
  replica.apply(records);
  return values;
}

/** Walk the whole replica chunk by chunk, as the scanner does. */
function walkAll(replica: ReplicaStore, request: Omit<ChunkRequest, 'afterKey'>): { chunks: Chunk[]; walked: number } {
  const chunks: Chunk[] = [];
  let afterKey: string | null = null;
  let walked = 0;
  for (;;) {
    const chunk = replica.chunk({ ...request, afterKey });
    if (chunk.lastKey === null) return { chunks, walked };
    expect(chunk.walked).toBeLessThanOrEqual(request.limit);
    chunks.push(chunk);
    walked += chunk.walked;
    afterKey = chunk.lastKey;
  }
}

describe('ReplicaStore.chunk (keyset pagination)', () => {
  let tmp: TmpDir;
  let replica: ReplicaStore;

  beforeEach(() => {
    tmp = new TmpDir();
    replica = tmp.track(ReplicaStore.open({ path: join(tmp.path, 'replica.sqlite') }));
  });
  afterEach(() => tmp.cleanup());

  it('walks every key exactly once, in key order, across many chunks', () => {
    const values = fill(replica, 1000);
    const { chunks, walked } = walkAll(replica, { limit: 37 });
    const keys = chunks.flatMap((c) => c.rows.map((r) => r.key));
    expect(keys).toEqual([...values.keys()].sort(byUtf8));
    expect(walked).toBe(1000);
    for (const chunk of chunks) {
      expect(chunk.lastKey).toBe(chunk.rows[chunk.rows.length - 1]!.key);
      for (const row of chunk.rows) expect(row).toEqual({ key: row.key, version: 1, value: values.get(row.key) });
    }
  });

  it('with a filter, returns exactly the matching rows once each while walking every key', () => {
    const values = fill(replica, 1000);
    const { chunks, walked } = walkAll(replica, { limit: 50, filterSql: STATUS_IS, filterParams: ['dormant'] });
    const expected = [...values]
      .filter(([, v]) => v.status === 'dormant')
      .map(([k]) => k)
      .sort(byUtf8);
    expect(chunks.flatMap((c) => c.rows.map((r) => r.key))).toEqual(expected);
    expect(chunks.flatMap((c) => c.rows).every((r) => r.value.status === 'dormant')).toBe(true);
    expect(walked).toBe(1000);
    expect(chunks).toHaveLength(20);
    // lastKey is the last key walked, matched or not: the cursor never skips or repeats.
    const cursors = chunks.map((c) => c.lastKey!);
    expect([...cursors].sort(byUtf8)).toEqual(cursors);
    expect(new Set(cursors).size).toBe(cursors.length);
  });

  it('binds paths and values as parameters, booleans as JSON true/false, in placeholder order', () => {
    const values = fill(replica, 300);
    const { chunks } = walkAll(replica, {
      limit: 64,
      filterSql: 'json_extract(record, ?) = ? AND json_extract(record, ?) = ? AND json_extract(record, ?) >= ?',
      filterParams: ['$.value.status', 'active', '$.value.vip', true, '$.value.balance', 100],
    });
    const expected = [...values].filter(
      ([, v]) => v.status === 'active' && v.vip === true && (v.balance as number) >= 100,
    );
    expect(chunks.flatMap((c) => c.rows.map((r) => r.key))).toEqual(expected.map(([k]) => k).sort(byUtf8));
  });

  it('a chunk with no match still advances the cursor', () => {
    fill(replica, 10);
    const chunk = replica.chunk({ afterKey: null, limit: 5, filterSql: STATUS_IS, filterParams: ['closed'] });
    expect(chunk.rows).toEqual([]);
    expect(chunk.walked).toBe(5);
    expect(chunk.lastKey).not.toBeNull();
  });

  it('reports nothing left on an empty replica and after the last key', () => {
    expect(replica.chunk({ afterKey: null, limit: 10 })).toEqual({ rows: [], lastKey: null, walked: 0 });
    fill(replica, 3);
    const all = replica.chunk({ afterKey: null, limit: 10 });
    expect(all.walked).toBe(3);
    expect(replica.chunk({ afterKey: all.lastKey, limit: 10 })).toEqual({ rows: [], lastKey: null, walked: 0 });
  });

  it('sees writes applied between chunks: each chunk is its own short read', () => {
    replica.apply([
      { partition: 0, offset: '0', key: 'a', value: encodeStoredEntity({ version: 1, value: {}, seen: '' }) },
      { partition: 0, offset: '1', key: 'c', value: encodeStoredEntity({ version: 1, value: {}, seen: '' }) },
    ]);
    const first = replica.chunk({ afterKey: null, limit: 1 });
    replica.apply([
      { partition: 0, offset: '2', key: 'b', value: encodeStoredEntity({ version: 1, value: {}, seen: '' }) },
      { partition: 0, offset: '3', key: 'c', value: null },
    ]);
    const rest = replica.chunk({ afterKey: first.lastKey, limit: 10 });
    expect(rest.rows.map((r) => r.key)).toEqual(['b']);
  });

  it('a scan in progress does not hold the WAL: another connection can write and truncate it', () => {
    fill(replica, 500);
    const writer = tmp.track(ReplicaStore.open({ path: replica.path }));
    const first = replica.chunk({ afterKey: null, limit: 100, filterSql: STATUS_IS, filterParams: ['active'] });
    writer.apply([
      {
        partition: 0,
        offset: '1000',
        key: 'zzz',
        value: encodeStoredEntity({ version: 1, value: { status: 'active' }, seen: '' }),
      },
    ]);
    expect(writer.walSizeBytes()).toBeGreaterThan(0);
    expect(writer.checkpointWal('TRUNCATE').busy).toBe(false);
    expect(writer.walSizeBytes()).toBe(0);
    const rest = replica.chunk({
      afterKey: first.lastKey,
      limit: 1000,
      filterSql: STATUS_IS,
      filterParams: ['active'],
    });
    expect(rest.lastKey).toBe('zzz');
  });

  it.each([
    ['does not compile', 'json_extract(record, ', ['x']],
    ['has too few parameters', STATUS_IS, []],
    ['has too many parameters', STATUS_IS, ['a', 'b']],
    ['smuggles a second statement', '1) THEN record END FROM entities; DELETE FROM entities; --', []],
    ['is empty', '  ', []],
  ])('refuses a filter that %s', (_why, filterSql, filterParams) => {
    fill(replica, 5);
    expect(() => replica.chunk({ afterKey: null, limit: 10, filterSql, filterParams })).toThrow(
      StoreInvalidFilterError,
    );
    expect(replica.count()).toBe(5);
  });

  it('refuses a non-positive limit', () => {
    expect(() => replica.chunk({ afterKey: null, limit: 0 })).toThrow(/limit/);
  });
});
