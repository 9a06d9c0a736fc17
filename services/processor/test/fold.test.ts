import {
  commandIdFor,
  decodeCommandResult,
  encodeCommand,
  encodeEvent,
  encodeStoredEntity,
  type StoredEntity,
  type UpdateCommand,
} from '@state-relay/contracts';
import type { EntityDomain } from '@state-relay/domain';
import type { KafkaMessage } from 'kafkajs';
import { foldRecord, type FoldContext } from '../src/tasks/fold';
import { unitChanges, UnitOfWork } from '../src/tasks/unit-of-work';
import { counterDomain } from './counter-domain';

// The pure fold: what a record does to a unit of work. Against a real broker: poison.itest.ts.

/** Counters, except that the domain throws on the key 'boom' (a bug in the domain, for that input only). */
const touchy: EntityDomain = {
  ...counterDomain,
  applyEvent(key, event, current) {
    if (key === 'boom') throw new RangeError('boom is out of range');
    return counterDomain.applyEvent(key, event, current);
  },
  domainActions: {
    // A value JSON cannot hold: the throw comes from encoding the entity, after the domain returned.
    reset: (current) => ({ kind: 'update', value: { ...current, total: 10n as unknown as number } }),
  },
};

function context(store: Map<string, StoredEntity>, entityMaxBytes = 10_000): FoldContext {
  return {
    domain: touchy,
    commandsTopic: 'commands',
    current: (key) => store.get(key),
    now: () => 42,
    entityMaxBytes,
    deadLetterMaxBytes: 100_000,
  };
}

let offset = 0;
function record(
  topic: string,
  key: string,
  value: Buffer,
): { topic: string; partition: number; message: KafkaMessage } {
  return {
    topic,
    partition: 0,
    message: {
      key: Buffer.from(key),
      value,
      offset: String(offset++),
      timestamp: '0',
      attributes: 0,
      headers: {},
    } as KafkaMessage,
  };
}
const added = (key: string, amount: number) =>
  record('events', key, encodeEvent({ type: 'added', at: 1, data: { amount } }));
const command = (key: string, action: UpdateCommand['action'], scanId = 'scan'): ReturnType<typeof record> => {
  const c: UpdateCommand = {
    commandId: commandIdFor(scanId, key),
    scanId,
    key,
    asOf: 1,
    condition: { field: 'total', op: 'exists' },
    action,
    issuedAt: 1,
  };
  return record('commands', key, encodeCommand(c));
};
const resultOf = (unit: UnitOfWork, i = 0) =>
  decodeCommandResult(unit.results[i]!.key as Buffer, unit.results[i]!.value as Buffer);

describe('foldRecord', () => {
  it('turns an event the domain throws on into a PROCESSING_FAILED dead letter, and keeps nothing of it', () => {
    const unit = new UnitOfWork();
    const ctx = context(new Map());
    foldRecord(unit, added('boom', 1), ctx);
    foldRecord(unit, added('fine', 2), ctx);
    expect(unit.deadLetters).toHaveLength(1);
    expect(unit.deadLetters[0]!.headers).toMatchObject({
      'dlq.code': 'PROCESSING_FAILED',
      'dlq.reason': 'applying the event failed: RangeError: boom is out of range',
    });
    expect(unit.cache.get('boom')).toBeUndefined();
    expect(unit.cache.get('fine')?.value).toEqual({ total: 2, adds: 1 });
    expect(unit.eventOutcomes).toEqual({ changed: 1, unchanged: 0, dead_letter: 1 });
  });

  it('answers a command whose outcome cannot be stored with an invalid result that says so, the entity untouched', () => {
    const current: StoredEntity = { version: 4, value: { total: 20, adds: 2 }, seen: '' };
    const unit = new UnitOfWork();
    foldRecord(unit, command('c-1', { domain: 'reset' }), context(new Map([['c-1', current]])));
    expect(resultOf(unit)).toMatchObject({
      outcome: 'invalid',
      version: 4,
      reason: expect.stringMatching(/^the action failed: TypeError: .*BigInt/),
    });
    expect(unit.cache.size).toBe(0);
    expect(unit.deadLetters).toHaveLength(0);
  });

  it('refuses a change that would make the entity larger than ENTITY_MAX_BYTES: invalid for a command, a dead letter for an event', () => {
    const current: StoredEntity = { version: 1, value: { total: 1, adds: 1, note: 'x'.repeat(900) }, seen: '' };
    const limit = encodeStoredEntity(current).length + 100;
    const ctx = context(new Map([['c-1', current]]), limit);
    const unit = new UnitOfWork();
    foldRecord(unit, command('c-1', { set: { more: 'y'.repeat(50) } }), ctx);
    expect(resultOf(unit).outcome).toBe('applied');
    const grown = unit.cache.get('c-1')!;
    expect(unit.encoded.get('c-1')).toEqual(encodeStoredEntity(grown)); // the bytes the changelog gets

    const next = new UnitOfWork();
    const ctx2 = context(new Map([['c-1', grown]]), limit);
    foldRecord(next, command('c-1', { set: { most: 'z'.repeat(200) } }, 'scan-2'), ctx2);
    expect(resultOf(next)).toMatchObject({ outcome: 'invalid', version: grown.version });
    expect(resultOf(next).reason).toMatch(/over the limit of \d+ \(ENTITY_MAX_BYTES\)/);
    expect(next.cache.size).toBe(0);

    const tiny = context(new Map(), 30);
    const events = new UnitOfWork();
    foldRecord(events, added('c-2', 12345678), tiny);
    expect(events.deadLetters[0]!.headers).toMatchObject({ 'dlq.code': 'ENTITY_TOO_LARGE' });
    expect(events.cache.size).toBe(0);
  });
});

describe('encoding each entity once per key per unit', () => {
  it('encodes a key changed several times in a unit once, at commit, as its last value', () => {
    const unit = new UnitOfWork();
    const ctx = { ...context(new Map()), current: (k: string) => unit.cache.get(k) ?? undefined };
    for (let i = 1; i <= 3; i++) foldRecord(unit, added('c-1', i), ctx);
    expect(unit.encoded.size).toBe(0); // nothing encoded at fold: the bound showed it fits
    const last = unit.cache.get('c-1')!;
    expect(last.value).toEqual({ total: 6, adds: 3 });
    expect(unitChanges(unit)).toEqual([['c-1', encodeStoredEntity(last)]]);
  });

  it('keeps the bytes it had to measure at fold, and drops them when a later change of the key is not measured', () => {
    const current: StoredEntity = { version: 1, value: { total: 1, adds: 1, note: 'x'.repeat(900) }, seen: '' };
    const limit = encodeStoredEntity(current).length + 100; // the bound (6 bytes a character) is over it
    const unit = new UnitOfWork();
    const store = new Map([['c-1', current]]);
    foldRecord(unit, added('c-1', 1), context(store, limit));
    expect(unit.encoded.get('c-1')).toEqual(encodeStoredEntity(unit.cache.get('c-1')!));
    foldRecord(unit, command('c-1', { unset: ['note'] }), {
      ...context(store, limit),
      current: (k) => unit.cache.get(k) ?? undefined,
    });
    expect(unit.encoded.has('c-1')).toBe(false);
    expect(unitChanges(unit)).toEqual([['c-1', encodeStoredEntity(unit.cache.get('c-1')!)]]);
  });
});
