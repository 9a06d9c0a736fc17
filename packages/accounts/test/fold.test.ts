import type { DomainEvent } from '@state-relay/contracts';
import type { JsonObject } from '@state-relay/rules';
import { accountsDomain, applyAccountEvent, validateAccountEvent, type Account } from '../src';

const DAY = 86_400_000;
const T0 = 1_700_000_000_000;
const ev = (type: string, at: number, data: JsonObject = {}): DomainEvent => ({ type, at, data });
const fold = (events: DomainEvent[], start?: JsonObject): JsonObject | null | undefined =>
  events.reduce<JsonObject | null | undefined>((cur, e) => applyAccountEvent('acct-1', e, cur ?? undefined), start);

const opened: Account = {
  status: 'active',
  balance: 0,
  createdAt: T0,
  lastActiveAt: T0,
  counters: { events: 1, activities: 0, payments: 0 },
};

describe('account fold', () => {
  it('signed_up creates an active account with zero balance', () => {
    expect(applyAccountEvent('acct-1', ev('signed_up', T0), undefined)).toEqual(opened);
  });

  it('signed_up on an existing account only counts the event', () => {
    const later = applyAccountEvent('acct-1', ev('signed_up', T0 + DAY), { ...opened, balance: 5 });
    expect(later).toEqual({ ...opened, balance: 5, counters: { events: 2, activities: 0, payments: 0 } });
  });

  it('an event other than signed_up for a missing account creates nothing', () => {
    for (const e of [ev('activity', T0), ev('payment', T0, { amount: 10 }), ev('closed', T0)]) {
      expect(applyAccountEvent('acct-1', e, undefined)).toBeNull();
    }
  });

  it('activity moves lastActiveAt forward only, and counts', () => {
    const next = fold([ev('activity', T0 + 5 * DAY), ev('activity', T0 + 2 * DAY)], opened);
    expect(next).toEqual({
      ...opened,
      lastActiveAt: T0 + 5 * DAY,
      counters: { events: 3, activities: 2, payments: 0 },
    });
  });

  it('payment adds the amount (negative too) and counts as activity', () => {
    const next = fold(
      [ev('payment', T0 + DAY, { amount: 1250 }), ev('payment', T0 + 2 * DAY, { amount: -2000 })],
      opened,
    );
    expect(next).toEqual({
      ...opened,
      balance: -750,
      lastActiveAt: T0 + 2 * DAY,
      counters: { events: 3, activities: 2, payments: 2 },
    });
  });

  it('activity or payment wakes a dormant account, even one that arrives late', () => {
    const dormant = { ...opened, status: 'dormant', lastActiveAt: T0 + 40 * DAY };
    expect(applyAccountEvent('acct-1', ev('activity', T0 + 41 * DAY), dormant)).toMatchObject({ status: 'active' });
    expect(applyAccountEvent('acct-1', ev('payment', T0, { amount: 1 }), dormant)).toMatchObject({
      status: 'active',
      lastActiveAt: T0 + 40 * DAY,
    });
  });

  it('closed closes without touching lastActiveAt, and a closed account only counts events', () => {
    const closed = applyAccountEvent('acct-1', ev('closed', T0 + DAY), opened)!;
    expect(closed).toEqual({ ...opened, status: 'closed', counters: { events: 2, activities: 0, payments: 0 } });
    const after = fold(
      [ev('payment', T0 + 2 * DAY, { amount: 99 }), ev('activity', T0 + 3 * DAY), ev('signed_up', T0 + 4 * DAY)],
      closed,
    );
    expect(after).toEqual({ ...closed, counters: { events: 5, activities: 0, payments: 0 } });
  });

  it('keeps fields it does not know and tolerates ill-typed ones a command may have set', () => {
    const odd = { status: 'suspended', balance: 'n/a', flag: true, counters: { events: 'x', custom: 3 } };
    expect(applyAccountEvent('acct-1', ev('payment', T0, { amount: 7 }), odd)).toEqual({
      status: 'suspended',
      balance: 7,
      flag: true,
      lastActiveAt: T0,
      counters: { events: 1, activities: 1, payments: 1, custom: 3 },
    });
  });

  it('is pure: the current value is not mutated', () => {
    const current = structuredClone(opened);
    applyAccountEvent('acct-1', ev('payment', T0 + DAY, { amount: 1 }), current);
    applyAccountEvent('acct-1', ev('closed', T0 + DAY), current);
    expect(current).toEqual(opened);
  });

  it('refuses an event that does not validate rather than guessing', () => {
    expect(() => applyAccountEvent('acct-1', ev('refund', T0), opened)).toThrow(TypeError);
  });
});

describe('validateAccountEvent', () => {
  it('accepts every account event type', () => {
    for (const e of [
      ev('signed_up', T0),
      ev('activity', T0),
      ev('payment', T0, { amount: -3 }),
      ev('closed', T0, { why: 'x' }),
    ]) {
      expect(validateAccountEvent(e)).toBeNull();
    }
  });

  it('rejects an unknown type', () => {
    expect(validateAccountEvent(ev('refund', T0))).toBe(
      'value.type: unknown account event type, expected one of signed_up, activity, payment, closed',
    );
  });

  it('rejects a payment whose amount is not an integer of minor units', () => {
    for (const data of [{}, { amount: 1.5 }, { amount: '10' }, { amount: null }, { amount: 2 ** 53 }] as JsonObject[]) {
      expect(validateAccountEvent(ev('payment', T0, data))).toBe(
        'value.data.amount: expected an integer amount in minor units (may be negative)',
      );
    }
  });

  it('is what the domain object exposes to the processor', () => {
    expect(accountsDomain.name).toBe('accounts');
    expect(accountsDomain.validateEvent).toBe(validateAccountEvent);
    expect(accountsDomain.applyEvent).toBe(applyAccountEvent);
    expect(Object.keys(accountsDomain.domainActions).sort()).toEqual(['close', 'mark_dormant']);
  });
});
