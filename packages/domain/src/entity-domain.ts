import type { DomainEvent } from '@state-relay/contracts';
import type { DomainAction, JsonObject } from '@state-relay/rules';

/**
 * What the processor needs from a domain, and all it may depend on: swap this object to
 * run the same machinery over another aggregate.
 */
export interface EntityDomain {
  name: string;
  /**
   * Null if the event is acceptable, else a reason naming the field (the processor
   * dead-letters the record with it). Pure; does not depend on the current state.
   */
  validateEvent(event: DomainEvent): string | null;
  /**
   * The entity after `event`, given the entity before it (undefined = does not exist).
   * Returns the next value, or null when no entity exists afterwards: a delete if `current`
   * existed, nothing to write if it did not. Must be pure and deterministic (no clock, no
   * randomness, no mutation of `current`), since restore, replay and the test oracle rely
   * on it folding the same way every time. Precondition: validateEvent(event) === null.
   */
  applyEvent(key: string, event: DomainEvent, current: JsonObject | undefined): JsonObject | null;
  /** Named actions a command can invoke as `{ "domain": name, "params": {...} }`. */
  domainActions: Record<string, DomainAction>;
}

/** An event with the entity key it was (or will be) produced under. */
export interface KeyedEvent {
  key: string;
  event: DomainEvent;
}
