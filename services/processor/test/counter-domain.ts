import type { DomainEvent } from '@state-relay/contracts';
import type { EntityDomain } from '@state-relay/domain';
import type { ActionOutcome, JsonObject } from '@state-relay/rules';

/**
 * A second, tiny domain that proves the processor runs on any EntityDomain (docs/domains.md):
 * counters. `added { amount }` creates the counter if it is missing and adds to it; `cleared`
 * deletes it (a tombstone in the changelog). The domain action `reset` sets the total to 0.
 */
export const counterDomain: EntityDomain = {
  name: 'counters',
  validateEvent(event: DomainEvent): string | null {
    if (event.type === 'cleared') return null;
    if (event.type !== 'added') return 'value.type: unknown counter event type, expected added or cleared';
    const amount = event.data['amount'];
    return typeof amount === 'number' && Number.isSafeInteger(amount) ? null : 'value.data.amount: expected an integer';
  },
  applyEvent(_key: string, event: DomainEvent, current: JsonObject | undefined): JsonObject | null {
    if (event.type === 'cleared') return null;
    const total = typeof current?.['total'] === 'number' ? current['total'] : 0;
    const adds = typeof current?.['adds'] === 'number' ? current['adds'] : 0;
    return { ...current, total: total + (event.data['amount'] as number), adds: adds + 1 };
  },
  domainActions: {
    reset: (current: JsonObject): ActionOutcome => ({ kind: 'update', value: { ...current, total: 0 } }),
  },
};
