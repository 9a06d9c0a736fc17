import { encodeStoredEntity, seenOf } from '@state-relay/contracts';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  ReplicaStore,
  StoreClosedError,
  StoreInvalidArgumentError,
  type ChangelogRecord,
  type StoredEntity,
} from '../src';
import { TmpDir } from './tmp-dir';

const entity = (version: number, value: Record<string, unknown> = {}): StoredEntity => ({
  version,
  value,
  seen: seenOf([`cmd-${version}`]),
});
const rec = (partition: number, offset: string, key: string, e: StoredEntity | null): ChangelogRecord => ({
  partition,
  offset,
  key,
  value: e === null ? null : encodeStoredEntity(e),
});

describe('ReplicaStore', () => {
  let tmp: TmpDir;
  let path: string;
  const open = () => tmp.track(ReplicaStore.open({ path }));

  beforeEach(() => {
    tmp = new TmpDir();
    path = join(tmp.path, 'replica.sqlite');
  });
  afterEach(() => tmp.cleanup());

  it('applies records and records each partition’s next offset as its highest offset + 1', () => {
    const replica = open();
    replica.apply([
      rec(0, '10', 'a', entity(1, { status: 'active' })),
      rec(1, '3', 'b', entity(1)),
      rec(0, '11', 'c', entity(1)),
      rec(0, '12', 'a', entity(2, { status: 'dormant' })),
    ]);
    expect(replica.offsets()).toEqual(
      new Map([
        [0, '13'],
        [1, '4'],
      ]),
    );
    expect(replica.get('a')).toEqual({ version: 2, value: { status: 'dormant' } });
    expect(replica.count()).toBe(3);
  });

  it('resumes from the same offsets and rows after a reopen', () => {
    const first = open();
    first.apply([rec(2, '100', 'x', entity(4, { n: 1 }))]);
    first.apply([rec(2, '101', 'y', entity(1)), rec(5, '0', 'z', entity(1))]);
    first.close();

    const again = open();
    expect(again.offsets()).toEqual(
      new Map([
        [2, '102'],
        [5, '1'],
      ]),
    );
    expect(again.get('x')).toEqual({ version: 4, value: { n: 1 } });
    expect(again.count()).toBe(3);
  });

  it('a tombstone removes the row but still advances the offset', () => {
    const replica = open();
    replica.apply([rec(0, '0', 'a', entity(1)), rec(0, '1', 'b', entity(1))]);
    replica.apply([rec(0, '2', 'a', null), rec(0, '3', 'never-seen', null)]);
    expect(replica.get('a')).toBeUndefined();
    expect(replica.count()).toBe(1);
    expect(replica.offsets().get(0)).toBe('4');
  });

  it('a bad record rolls back the whole batch, rows and offsets alike', () => {
    const replica = open();
    replica.apply([rec(0, '0', 'a', entity(1))]);
    expect(() => replica.apply([rec(0, '1', 'a', entity(2)), rec(0, 'not-an-offset', 'b', entity(1))])).toThrow(
      StoreInvalidArgumentError,
    );
    expect(replica.get('a')).toEqual({ version: 1, value: {} });
    expect(replica.get('b')).toBeUndefined();
    expect(replica.offsets()).toEqual(new Map([[0, '1']]));
  });

  it('takes the numerically highest offset of a partition, whatever the order and digit count', () => {
    const replica = open();
    replica.apply([
      rec(0, '10', 'a', entity(1)),
      rec(0, '9', 'b', entity(1)),
      rec(1, '99', 'c', entity(1)),
      rec(1, '100', 'd', entity(1)),
    ]);
    expect(replica.offsets()).toEqual(
      new Map([
        [0, '11'],
        [1, '101'],
      ]),
    );
  });

  it('keeps int64 offsets exact', () => {
    const replica = open();
    replica.apply([rec(0, '9007199254740993', 'a', entity(1))]);
    expect(replica.offsets().get(0)).toBe('9007199254740994');
  });

  it('an empty batch changes nothing', () => {
    const replica = open();
    replica.apply([]);
    expect(replica.offsets().size).toBe(0);
  });

  it('stores where the fetch ended (markers included) with the records, or alone for a batch of markers', () => {
    const replica = open();
    replica.apply([rec(0, '0', 'a', entity(1)), rec(0, '1', 'b', entity(1))], { partition: 0, next: '3' });
    expect(replica.offsets().get(0)).toBe('3'); // the commit marker at 2 is consumed too
    replica.apply([], { partition: 0, next: '5' });
    expect(replica.offsets().get(0)).toBe('5');
    expect(replica.count()).toBe(2);
    // A `through` short of the records never hides them.
    replica.apply([rec(1, '9', 'c', entity(1))], { partition: 1, next: '4' });
    expect(replica.offsets().get(1)).toBe('10');
  });

  it('rejects a `through` that is not a partition and an offset, writing nothing', () => {
    const replica = open();
    expect(() => replica.apply([rec(0, '0', 'a', entity(1))], { partition: -1, next: '1' })).toThrow(
      StoreInvalidArgumentError,
    );
    expect(() => replica.apply([], { partition: 0, next: '-1' })).toThrow(/through.next/);
    expect(replica.count()).toBe(0);
    expect(replica.offsets().size).toBe(0);
  });

  it('wipe drops rows and offsets so the changelog is consumed from the start', () => {
    const replica = open();
    replica.apply([rec(0, '7', 'a', entity(1))]);
    replica.wipe();
    expect(replica.count()).toBe(0);
    expect(replica.offsets().size).toBe(0);
  });

  it('reports the WAL and folds it back on a TRUNCATE checkpoint', () => {
    const replica = open();
    replica.apply(
      Array.from({ length: 200 }, (_, i) => rec(0, String(i), `k${i}`, entity(1, { pad: 'x'.repeat(100) }))),
    );
    expect(replica.walSizeBytes()).toBeGreaterThan(0);
    const result = replica.checkpointWal('TRUNCATE');
    expect(result.busy).toBe(false);
    expect(result.checkpointed).toBe(result.walPages);
    expect(replica.walSizeBytes()).toBe(0);
    expect(replica.checkpointWal()).toEqual({ busy: false, walPages: 0, checkpointed: 0 });
  });

  it('creates the directory of its file', () => {
    const nested = tmp.track(ReplicaStore.open({ path: join(tmp.path, 'a', 'b', 'replica.sqlite') }));
    expect(nested.count()).toBe(0);
  });

  it('close is idempotent and later use fails with STORE_CLOSED', () => {
    const replica = open();
    replica.close();
    replica.close();
    expect(() => replica.count()).toThrow(StoreClosedError);
    expect(() => replica.apply([rec(0, '0', 'a', entity(1))])).toThrow(StoreClosedError);
  });

  it('records when it last matched the changelog end; wipe forgets it', () => {
    const replica = open();
    expect(replica.syncedAt()).toBeNull();
    replica.markSynced(1_700_000_000_000);
    expect(replica.syncedAt()).toBe(1_700_000_000_000);
    expect(() => replica.markSynced(Number.NaN)).toThrow(StoreInvalidArgumentError);
    replica.wipe();
    expect(replica.syncedAt()).toBeNull();
  });

  it.each([1, 2])(
    'rebuilds a replica of schema version %i (values decoded on write) from scratch, and says so',
    (v) => {
      const raw = new Database(path);
      raw.exec(`CREATE TABLE entities (key TEXT PRIMARY KEY, version INTEGER NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE offsets (partition INTEGER PRIMARY KEY, next_offset INTEGER NOT NULL);
      ${v === 2 ? 'CREATE TABLE sync (id INTEGER PRIMARY KEY CHECK (id = 0), synced_at INTEGER NOT NULL); INSERT INTO sync VALUES (0, 5);' : ''}
      INSERT INTO entities VALUES ('old', 3, '{"a":1}'); INSERT INTO offsets VALUES (0, 12);
      PRAGMA user_version = ${v};`);
      raw.close();
      const replica = open();
      expect(replica.rebuiltFrom).toBe(v);
      expect(replica.get('old')).toBeUndefined();
      expect(replica.count()).toBe(0);
      expect(replica.offsets()).toEqual(new Map());
      replica.apply([rec(0, '0', 'new', entity(1, { b: 2 }))]);
      expect(replica.get('new')).toEqual({ version: 1, value: { b: 2 } });
      replica.close();
      expect(open().rebuiltFrom).toBeNull();
    },
  );

  it('stores the record bytes as they are, and skips (counts) a value that is not JSON', () => {
    const replica = open();
    const bytes = Buffer.from('{"version":2,"value":{"x":"é"},"seen":""}', 'utf8');
    const skipped = replica.apply([
      { partition: 0, offset: '0', key: Buffer.from('k1', 'utf8'), value: bytes },
      { partition: 0, offset: '1', key: 'k2', value: Buffer.from('{not json', 'utf8') },
    ]);
    expect(skipped).toBe(1);
    expect(replica.get('k1')).toEqual({ version: 2, value: { x: 'é' } });
    expect(replica.get('k2')).toBeUndefined();
    expect(replica.offsets()).toEqual(new Map([[0, '2']]));
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT record FROM entities WHERE key = ?').pluck().get('k1')).toBe(bytes.toString('utf8'));
    raw.close();
  });
});
