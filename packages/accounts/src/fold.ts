import type { DomainEvent } from '@state-relay/contracts';
import type { JsonObject } from '@state-relay/rules';
import { ACCOUNT_EVENT_TYPES, newAccount, numberField, withCounters } from './account';

/**
 * Null if the event is a well-formed account event, else the reason. Extra `data` fields
 * are ignored (forward compatible); `payment` needs an integer `amount` in minor units.
 */
export function validateAccountEvent(event: DomainEvent): string | null {
  if (!(ACCOUNT_EVENT_TYPES as readonly string[]).includes(event.type)) {
    return `value.type: unknown account event type, expected one of ${ACCOUNT_EVENT_TYPES.join(', ')}`;
  }
  if (event.type === 'payment') {
    const amount = event.data['amount'];
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount)) {
      return 'value.data.amount: expected an integer amount in minor units (may be negative)';
    }
  }
  return null;
}

/**
 * The account fold. Exactly:
 * - missing account: `signed_up` creates it (active, balance 0, createdAt = lastActiveAt =
 *   at); any other event creates nothing (returns null, nothing to write).
 * - every event on an existing account increments counters.events, and on a closed account
 *   that is all it does; `signed_up` on an existing account also does nothing more.
 * - `activity`: lastActiveAt = max(lastActiveAt, at), dormant -> active, counters.activities++.
 * - `payment`: as `activity`, plus balance += amount and counters.payments++.
 * - `closed`: status -> closed (lastActiveAt unchanged).
 * Never deletes. Pure: `current` is not mutated; unknown fields on it are kept.
 */
export function applyAccountEvent(
  _key: string,
  event: DomainEvent,
  current: JsonObject | undefined,
): JsonObject | null {
  const problem = validateAccountEvent(event);
  if (problem !== null) throw new TypeError(`applyAccountEvent: invalid event (validate first): ${problem}`);
  if (current === undefined) return event.type === 'signed_up' ? newAccount(event.at) : null;
  if (current['status'] === 'closed' || event.type === 'signed_up') return withCounters(current, { events: 1 });
  switch (event.type) {
    case 'activity':
      return touched(withCounters(current, { events: 1, activities: 1 }), event.at);
    case 'payment': {
      const next = touched(withCounters(current, { events: 1, activities: 1, payments: 1 }), event.at);
      return { ...next, balance: numberField(current['balance']) + (event.data['amount'] as number) };
    }
    default: // 'closed'
      return { ...withCounters(current, { events: 1 }), status: 'closed' };
  }
}

/** Activity seen at `at`: a dormant account wakes up, whatever the order events arrive in. */
function touched(account: JsonObject, at: number): JsonObject {
  const lastActiveAt = Math.max(numberField(account['lastActiveAt']), at);
  const status = account['status'] === 'dormant' ? 'active' : account['status'];
  return status === undefined ? { ...account, lastActiveAt } : { ...account, lastActiveAt, status };
}
