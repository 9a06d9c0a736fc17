import type { JsonObject } from '@state-relay/rules';
import { accountsDomain } from '../src';

const ctx = { asOf: 1_700_000_000_000 };
const account = (status: string): JsonObject => ({ status, balance: 10, lastActiveAt: 1, counters: { events: 1 } });
const { mark_dormant: markDormant, close } = accountsDomain.domainActions;

describe('domain actions', () => {
  it('mark_dormant makes an active account dormant and keeps everything else', () => {
    expect(markDormant!(account('active'), {}, ctx)).toEqual({ kind: 'update', value: account('dormant') });
  });

  it('mark_dormant leaves a dormant or closed account as it is', () => {
    for (const status of ['dormant', 'closed']) {
      expect(markDormant!(account(status), {}, ctx)).toEqual({ kind: 'update', value: account(status) });
    }
  });

  it('close closes from any status and keeps the account', () => {
    for (const status of ['active', 'dormant', 'closed']) {
      expect(close!(account(status), {}, ctx)).toEqual({ kind: 'update', value: account('closed') });
    }
  });

  it('does not mutate the current value', () => {
    const current = account('active');
    markDormant!(current, {}, ctx);
    close!(current, {}, ctx);
    expect(current).toEqual(account('active'));
  });
});
