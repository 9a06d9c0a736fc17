import {
  changelogTopicName,
  COMMAND_DIGEST_LENGTH,
  commandDigest,
  decodeStoredEntity,
  encodeStoredEntity,
  hasSeen,
  isSeen,
  MAX_REMEMBERED_COMMAND_IDS,
  parseStoredEntity,
  rememberCommand,
  seenCount,
  seenOf,
  type StoredEntity,
} from '../src';
import { decodeFailure, json, key } from './helpers';

describe('stored entity codec', () => {
  const entity: StoredEntity = {
    version: 7,
    value: { status: 'active', nested: { a: [1, 'x', null] } },
    seen: seenOf(['c1', 'c2']),
  };

  it('round-trips an entity, through the wire decoder and the store parser alike', () => {
    const bytes = encodeStoredEntity(entity);
    expect(decodeStoredEntity(key('acct-1'), bytes)).toEqual(entity);
    expect(parseStoredEntity(bytes.toString('utf8'))).toEqual(entity);
  });

  it('reads a record of the first format (command ids) as their digests', () => {
    const old = json({ version: 7, value: entity.value, commandIds: ['c1', 'c2'] });
    expect(decodeStoredEntity(key('acct-1'), old)).toEqual(entity);
    expect(parseStoredEntity(old.toString('utf8'))).toEqual(entity);
  });

  it('reads a null value as a tombstone', () => {
    expect(decodeStoredEntity(key('acct-1'), null)).toBeNull();
  });

  it('still needs a key for a tombstone', () => {
    expect(decodeFailure(() => decodeStoredEntity(null, null)).code).toBe('KEY_MISSING');
  });

  it('rejects a malformed entity with SCHEMA_INVALID naming the field', () => {
    const reasonFor = (patch: Record<string, unknown>) =>
      decodeFailure(() => decodeStoredEntity(key('k'), json({ ...entity, ...patch }))).reason;
    expect(reasonFor({ version: '7' })).toBe(
      'value.version: expected a non-negative integer, got a string of 1 characters',
    );
    expect(reasonFor({ value: null })).toBe('value.value: expected an object, got null');
    expect(reasonFor({ seen: 'c1' })).toBe(
      'value.seen: expected whole 11-character command digests (base64url), got a string of 2 characters',
    );
    expect(reasonFor({ seen: '+'.repeat(11) })).toMatch(/^value\.seen: expected whole/);
    expect(reasonFor({ seen: undefined, commandIds: ['c1', 3] })).toBe(
      'value.commandIds[1]: expected a non-empty string of at most 200 characters, got the number 3',
    );
    expect(reasonFor({ seen: undefined })).toBe(
      'value.seen: expected whole 11-character command digests (base64url), got nothing',
    );
  });
});

describe('command digests', () => {
  it('are 11 base64url characters (64 bits), the same for the same id, different for others', () => {
    const d = commandDigest('a-command');
    expect(d).toHaveLength(COMMAND_DIGEST_LENGTH);
    expect(isSeen(d)).toBe(true);
    expect(commandDigest('a-command')).toBe(d);
    const many = new Set(Array.from({ length: 10_000 }, (_, i) => commandDigest(`c-${i}`)));
    expect(many.size).toBe(10_000);
  });

  it('are matched only at digest boundaries', () => {
    const a = commandDigest('a');
    const b = commandDigest('b');
    const seen = a + b;
    expect([hasSeen(seen, 'a'), hasSeen(seen, 'b'), hasSeen(seen, 'c')]).toEqual([true, true, false]);
    // a digest that appears only across the boundary of two others is not remembered
    const straddling = seen.slice(5, 5 + COMMAND_DIGEST_LENGTH);
    expect(seen.indexOf(straddling)).toBe(5);
    expect(isSeen(straddling) ? [0, 11].includes(seen.indexOf(straddling)) : false).toBe(false);
  });

  it('keep the newest MAX_REMEMBERED_COMMAND_IDS, growing a record by 11 bytes per command', () => {
    let seen = '';
    const sizes: number[] = [];
    for (let i = 0; i < MAX_REMEMBERED_COMMAND_IDS + 6; i++) {
      seen = rememberCommand(seen, `cmd-${i}`);
      sizes.push(encodeStoredEntity({ version: 1, value: {}, seen }).length);
    }
    expect(seenCount(seen)).toBe(MAX_REMEMBERED_COMMAND_IDS);
    expect(hasSeen(seen, 'cmd-5')).toBe(false);
    expect(hasSeen(seen, 'cmd-6')).toBe(true);
    expect(sizes[1]! - sizes[0]!).toBe(COMMAND_DIGEST_LENGTH);
    expect(sizes[sizes.length - 1]).toBe(sizes[MAX_REMEMBERED_COMMAND_IDS - 1]);
  });
});

describe('changelogTopicName', () => {
  it('follows Kafka Streams’ naming', () => {
    expect(changelogTopicName('state-relay', 'accounts')).toBe('state-relay-accounts-changelog');
  });

  it('refuses names Kafka would reject, saying which part is wrong', () => {
    expect(() => changelogTopicName('my app', 'accounts')).toThrow(/^appId must be non-empty/);
    expect(() => changelogTopicName('app', '')).toThrow(/^storeName must be non-empty/);
    expect(() => changelogTopicName('a'.repeat(240), 'store')).toThrow(/exceeds Kafka's limit of 249/);
  });
});
