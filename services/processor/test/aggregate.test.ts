import { accountsDomain } from '@state-relay/accounts';
import {
  COMMAND_DIGEST_LENGTH,
  commandDigest,
  hasSeen,
  seenCount,
  type StoredEntity,
  type UpdateCommand,
} from '@state-relay/contracts';
import { aggregate } from '../src/aggregate';

const asOf = Date.UTC(2026, 10, 1);
const day = 86_400_000;
const account = (over: Record<string, unknown> = {}): StoredEntity => ({
  version: 3,
  value: {
    status: 'active',
    balance: 0,
    createdAt: asOf - 100 * day,
    lastActiveAt: asOf - 40 * day,
    counters: { events: 3, activities: 2, payments: 0 },
    ...over,
  } as StoredEntity['value'],
  seen: '',
});
const dormancy = (over: Partial<UpdateCommand> = {}): UpdateCommand => ({
  commandId: 'c-1',
  scanId: 's-1',
  key: 'acct-1',
  asOf,
  condition: {
    all: [
      { field: 'status', op: 'eq', value: 'active' },
      { field: 'lastActiveAt', op: 'lt', value: { $ago: 'P30D' } },
    ],
  },
  action: { set: { status: 'dormant' } },
  issuedAt: asOf,
  ...over,
});
const run = (current: StoredEntity | undefined, command: UpdateCommand) =>
  aggregate(accountsDomain, 'acct-1', { kind: 'command', command }, current);

describe('aggregate: commands', () => {
  it('applies a command whose condition holds on the current value, bumping the version and remembering the id', () => {
    const { next, verdict } = run(account(), dormancy());
    expect(verdict).toEqual({ outcome: 'applied', version: 4 });
    expect(next?.value.status).toBe('dormant');
    expect(next?.seen).toBe(commandDigest('c-1'));
  });

  it('re-checks the condition: an account active again since the scan read it is condition_false, value untouched', () => {
    const current = account({ lastActiveAt: asOf - day });
    const { next, verdict } = run(current, dormancy());
    expect(verdict?.outcome).toBe('condition_false');
    expect(next?.value).toEqual(current.value);
    expect(next?.version).toBe(3);
  });

  it('a command seen before is a duplicate and changes nothing', () => {
    const once = run(account(), dormancy()).next!;
    const twice = run(once, dormancy());
    expect(twice.verdict?.outcome).toBe('duplicate');
    expect(twice.next).toBeUndefined();
  });

  it('a condition_false command is remembered too, so a re-emission is a duplicate, not a second judgement', () => {
    const judged = run(account({ status: 'closed' }), dormancy()).next!;
    expect(run({ ...judged, value: account().value }, dormancy()).verdict?.outcome).toBe('duplicate');
  });

  it('rejects a stale expected version', () => {
    expect(run(account(), dormancy({ expectedVersion: 2 })).verdict).toMatchObject({
      outcome: 'version_conflict',
      version: 3,
    });
    expect(run(account(), dormancy({ expectedVersion: 3 })).verdict?.outcome).toBe('applied');
  });

  it('not_found for a missing entity, and creates nothing', () => {
    expect(run(undefined, dormancy())).toEqual({ next: undefined, verdict: { outcome: 'not_found' } });
  });

  it('invalid names the offending field of a malformed condition or action', () => {
    const bad = run(account(), dormancy({ action: { set: { '__proto__.polluted': 1 } } }));
    expect(bad.verdict?.outcome).toBe('invalid');
    expect(bad.verdict?.reason).toMatch(/\/action\/set/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(run(account(), dormancy({ action: { domain: 'no_such_action' } })).verdict?.outcome).toBe('invalid');
  });

  it('an action that cannot apply to this value is invalid, recorded, and leaves the value', () => {
    const { verdict, next } = run(account({ status: 'active' }), dormancy({ action: { increment: { status: 1 } } }));
    expect(verdict?.outcome).toBe('invalid');
    expect(next?.value.status).toBe('active');
  });

  it('delete yields a tombstone', () => {
    expect(run(account(), dormancy({ action: { delete: true } }))).toEqual({
      next: null,
      verdict: { outcome: 'applied', version: 4 },
    });
  });

  it('named domain actions run through the same path', () => {
    const { next, verdict } = run(account(), dormancy({ action: { domain: 'mark_dormant' } }));
    expect(verdict?.outcome).toBe('applied');
    expect(next?.value.status).toBe('dormant');
  });

  it('remembers at most 64 command ids, oldest dropped first', () => {
    let current = account();
    for (let i = 0; i < 70; i++) {
      current = run(
        current,
        dormancy({
          commandId: `c-${i}`,
          condition: { field: 'status', op: 'exists' },
          action: { increment: { balance: 1 } },
        }),
      ).next!;
    }
    expect(seenCount(current.seen)).toBe(64);
    expect(current.seen.slice(0, COMMAND_DIGEST_LENGTH)).toBe(commandDigest('c-6'));
    expect([hasSeen(current.seen, 'c-5'), hasSeen(current.seen, 'c-6'), hasSeen(current.seen, 'c-69')]).toEqual([
      false,
      true,
      true,
    ]);
    expect(current.value.balance).toBe(70);
    // a command beyond the memory is judged again (the documented limit), one inside is a duplicate
    expect(
      run(current, dormancy({ commandId: 'c-5', condition: { field: 'status', op: 'exists' } })).verdict?.outcome,
    ).toBe('applied');
    expect(run(current, dormancy({ commandId: 'c-6' })).verdict?.outcome).toBe('duplicate');
  });
});

describe('aggregate: events', () => {
  it('folds an event into a new version', () => {
    const created = aggregate(
      accountsDomain,
      'acct-1',
      { kind: 'event', event: { type: 'signed_up', at: asOf, data: {} } },
      undefined,
    );
    expect(created.next).toMatchObject({ version: 1, value: { status: 'active', balance: 0 } });
    expect(created.verdict).toBeUndefined();
    const paid = aggregate(
      accountsDomain,
      'acct-1',
      { kind: 'event', event: { type: 'payment', at: asOf + 1, data: { amount: 250 } } },
      created.next!,
    );
    expect(paid.next).toMatchObject({ version: 2, value: { balance: 250 } });
  });

  it('an event for an account that does not exist writes nothing', () => {
    expect(
      aggregate(accountsDomain, 'acct-1', { kind: 'event', event: { type: 'activity', at: asOf, data: {} } }, undefined)
        .next,
    ).toBeUndefined();
  });
});
