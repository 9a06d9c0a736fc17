import type { DomainEvent } from '@state-relay/contracts';
import { accountsOracle } from '../src/testing';

const ev = (type: string, at: number, data = {}): DomainEvent => ({ type, at, data });

describe('accountsOracle', () => {
  it('folds each key’s events in order and skips the ones the processor would dead-letter', () => {
    const state = accountsOracle([
      { key: 'a', event: ev('signed_up', 1) },
      { key: 'b', event: ev('activity', 2) }, // no account yet: nothing
      { key: 'a', event: ev('payment', 3, { amount: 500 }) },
      { key: 'a', event: ev('payment', 4, { amount: 0.5 }) }, // invalid: skipped
      { key: 'a', event: ev('refund', 5) }, // unknown: skipped
      { key: 'b', event: ev('signed_up', 6) },
      { key: 'b', event: ev('closed', 7) },
    ]);
    expect([...state.keys()].sort()).toEqual(['a', 'b']);
    expect(state.get('a')).toMatchObject({ balance: 500, lastActiveAt: 3, counters: { events: 2, payments: 1 } });
    expect(state.get('b')).toMatchObject({ status: 'closed', createdAt: 6, counters: { events: 2 } });
  });
});
