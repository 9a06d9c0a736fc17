import type { JsonObject } from '@state-relay/rules';
import type { KeyedEvent } from '@state-relay/domain';
import { applyAccountEvent, validateAccountEvent } from '../fold';

/**
 * The expected state after `events`, folded in order in one loop. Invalid events are
 * skipped, as the processor dead-letters them. Tests compare the distributed result with
 * this; it checks the machinery (delivery, ordering, exactly-once), not the fold itself.
 */
export function accountsOracle(events: readonly KeyedEvent[]): Map<string, JsonObject> {
  const state = new Map<string, JsonObject>();
  for (const { key, event } of events) {
    if (validateAccountEvent(event) !== null) continue;
    const next = applyAccountEvent(key, event, state.get(key));
    if (next === null) state.delete(key);
    else state.set(key, next);
  }
  return state;
}
