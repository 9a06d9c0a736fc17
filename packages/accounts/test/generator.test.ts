import { DORMANT_AFTER_MS } from '../src';
import { accountsOracle, generateAccountEvents, type AccountEventsOptions } from '../src/testing';

const NOW = Date.UTC(2025, 0, 1);
const options: AccountEventsOptions = { accounts: 200, eventsPerAccount: 5, seed: 42, now: NOW, dormantFraction: 0.25 };

describe('generateAccountEvents', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    expect(generateAccountEvents(options)).toEqual(generateAccountEvents(options));
    expect(generateAccountEvents({ ...options, seed: 43 })).not.toEqual(generateAccountEvents(options));
  });

  it('makes eventsPerAccount events per account, each account starting with signed_up', () => {
    const events = generateAccountEvents(options);
    expect(events).toHaveLength(1000);
    const firstType = new Map<string, string>();
    for (const { key, event } of events) if (!firstType.has(key)) firstType.set(key, event.type);
    expect(firstType.size).toBe(200);
    expect([...firstType.values()].every((t) => t === 'signed_up')).toBe(true);
  });

  it('orders events by time and uses zero-padded keys', () => {
    const events = generateAccountEvents(options);
    for (let i = 1; i < events.length; i++) expect(events[i]!.event.at).toBeGreaterThanOrEqual(events[i - 1]!.event.at);
    expect(events.every(({ key }) => /^acct-\d{6}$/.test(key))).toBe(true);
  });

  it('makes exactly the dormant share idle for more than 30 days, with a day of margin either side', () => {
    const state = accountsOracle(generateAccountEvents(options));
    const idle = [...state.values()].map((a) => NOW - (a['lastActiveAt'] as number));
    expect(idle.filter((ms) => ms > DORMANT_AFTER_MS)).toHaveLength(50);
    expect(
      idle.every((ms) => ms >= 0 && (ms <= DORMANT_AFTER_MS - 86_400_000 || ms >= DORMANT_AFTER_MS + 86_400_000)),
    ).toBe(true);
    expect([...state.values()].every((a) => a['status'] === 'active')).toBe(true);
  });

  it('works with one event per account and with no accounts', () => {
    expect(
      generateAccountEvents({ ...options, eventsPerAccount: 1 }).every(({ event }) => event.type === 'signed_up'),
    ).toBe(true);
    expect(generateAccountEvents({ ...options, accounts: 0 })).toEqual([]);
  });

  it('rejects options it cannot honour, saying which', () => {
    expect(() => generateAccountEvents({ ...options, eventsPerAccount: 0 })).toThrow(/^eventsPerAccount/);
    expect(() => generateAccountEvents({ ...options, dormantFraction: 1.5 })).toThrow(/^dormantFraction/);
    expect(() => generateAccountEvents({ ...options, accounts: -1 })).toThrow(/^accounts/);
    expect(() => generateAccountEvents({ ...options, now: 1000 })).toThrow(/^now/);
  });
});
