import type { JsonObject, JsonValue } from '@state-relay/rules';

export const ACCOUNT_STATUSES = ['active', 'dormant', 'closed'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

export const ACCOUNT_EVENT_TYPES = ['signed_up', 'activity', 'payment', 'closed'] as const;
export type AccountEventType = (typeof ACCOUNT_EVENT_TYPES)[number];

/** An account as the fold creates it. A type alias (not an interface) so it is a JsonObject. */
export type Account = {
  status: AccountStatus;
  /** Integer minor units (cents); may go negative. */
  balance: number;
  createdAt: number;
  lastActiveAt: number;
  counters: { events: number; activities: number; payments: number };
};

const COUNTER_NAMES = ['events', 'activities', 'payments'] as const;
type CounterName = (typeof COUNTER_NAMES)[number];

// Stored values are not guaranteed to be well-formed accounts: commands may set or unset
// any field. The fold therefore reads defensively (a missing or non-numeric number counts
// as 0) and keeps fields it does not know.

export function numberField(value: JsonValue | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** `current` with the given counters incremented; other counters and fields kept. */
export function withCounters(current: JsonObject, increments: Partial<Record<CounterName, number>>): JsonObject {
  const counters = current['counters'];
  const before: JsonObject =
    typeof counters === 'object' && counters !== null && !Array.isArray(counters) ? counters : {};
  const after: JsonObject = { ...before };
  for (const name of COUNTER_NAMES) after[name] = numberField(before[name]) + (increments[name] ?? 0);
  return { ...current, counters: after };
}

export function newAccount(at: number): Account {
  return {
    status: 'active',
    balance: 0,
    createdAt: at,
    lastActiveAt: at,
    counters: { events: 1, activities: 0, payments: 0 },
  };
}
