import { changelogTopicName, decodeStoredEntity, encodeStoredEntity, type StoredEntity } from '../src';
import { decodeFailure, json, key } from './helpers';

describe('stored entity codec', () => {
  const entity: StoredEntity = { version: 7, value: { status: 'active', nested: { a: [1, 'x', null] } }, commandIds: ['c1', 'c2'] };

  it('round-trips an entity', () => {
    expect(decodeStoredEntity(key('acct-1'), encodeStoredEntity(entity))).toEqual(entity);
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
    expect(reasonFor({ version: '7' })).toBe('value.version: expected a non-negative integer, got a string of 1 characters');
    expect(reasonFor({ value: null })).toBe('value.value: expected an object, got null');
    expect(reasonFor({ commandIds: 'c1' })).toBe('value.commandIds: expected an array of non-empty strings, got a string of 2 characters');
    expect(reasonFor({ commandIds: ['c1', 3] })).toBe(
      'value.commandIds[1]: expected a non-empty string of at most 200 characters, got the number 3',
    );
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
