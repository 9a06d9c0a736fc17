import type { Action, Condition, JsonObject } from '@state-relay/rules';

/** Limits every decoder enforces; exported so producers can check before they send. */
export const MAX_KEY_BYTES = 512;
export const MAX_VALUE_BYTES = 1024 * 1024;
/** Deeper JSON is rejected so recursive code downstream (rules, merges) cannot overflow the stack. */
export const MAX_JSON_DEPTH = 64;
export const MAX_EVENT_TYPE_LENGTH = 64;
/** For commandId, scanId and event id. */
export const MAX_ID_LENGTH = 200;
/** How many recent command ids an entity remembers for idempotency (see StoredEntity). */
export const MAX_REMEMBERED_COMMAND_IDS = 64;

/** A fact on the events topic (message key = entity key). */
export interface DomainEvent {
  type: string;
  /** Epoch ms. The wire may carry an ISO-8601 string; decodeEvent normalizes it. */
  at: number;
  data: JsonObject;
  /** Producer-assigned id, carried through for tracing; not used for de-duplication. */
  id?: string;
}

/**
 * A conditional update on the commands topic (message key = `key`). `condition` and
 * `action` are decoded as opaque objects; the processor validates their grammar and answers
 * `invalid` rather than dead-lettering.
 */
export interface UpdateCommand {
  /** Deterministic: commandIdFor(scanId, key). */
  commandId: string;
  scanId: string;
  key: string;
  /** The scan's instant (epoch ms); relative times in `condition` resolve against it. */
  asOf: number;
  condition: Condition;
  action: Action;
  /** Apply only if the entity is still at this version. */
  expectedVersion?: number;
  issuedAt: number;
}

export const COMMAND_OUTCOMES = [
  'applied',
  'condition_false',
  'version_conflict',
  'not_found',
  'duplicate',
  'invalid',
] as const;
export type CommandOutcome = (typeof COMMAND_OUTCOMES)[number];

/** Exactly one per command, on the results topic (message key = `key`). */
export interface CommandResult {
  commandId: string;
  scanId: string;
  key: string;
  outcome: CommandOutcome;
  reason?: string;
  /** The entity's version after the command (or as found, when not applied). */
  version?: number;
  processedAt: number;
}

/** The changelog value for one key; a null record value is a tombstone. */
export interface StoredEntity {
  /** Incremented on every change. */
  version: number;
  value: JsonObject;
  /**
   * The commands most recently judged on this entity (applied or not), as digests, oldest
   * first, at most MAX_REMEMBERED_COMMAND_IDS (see commandDigest, hasSeen, rememberCommand).
   */
  seen: string;
}
