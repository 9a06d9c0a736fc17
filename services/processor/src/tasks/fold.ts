import type { EntityDomain } from '@state-relay/domain';
import {
  DEAD_LETTER_CODES,
  decodeCommand,
  decodeEvent,
  deadLetterRecord,
  encodeCommandResult,
  encodeStoredEntity,
  isDecodeError,
  storedEntitySizeBound,
  type CommandResult,
  type DeadLetterSource,
  type StoredEntity,
  type UpdateCommand,
} from '@state-relay/contracts';
import type { KafkaMessage } from 'kafkajs';
import { aggregate, type AggregateInput, type CommandVerdict } from '../aggregate';
import type { UnitOfWork } from './unit-of-work';

export interface FoldContext {
  domain: EntityDomain;
  commandsTopic: string;
  /** The current entity (open unit, then committing unit, then the store). A store failure throws. */
  current: (key: string) => StoredEntity | undefined;
  now: () => number;
  /** Bytes an encoded entity may take (ENTITY_MAX_BYTES): what the changelog takes. */
  entityMaxBytes: number;
  /** Bytes a dead letter may take: what the dead-letter topic takes. */
  deadLetterMaxBytes: number;
}

export interface FoldInput {
  topic: string;
  partition: number;
  message: KafkaMessage;
}

/** A decoded input the aggregate could not turn into a change: nothing of it enters the unit. */
export interface Refusal {
  code: typeof DEAD_LETTER_CODES.PROCESSING_FAILED | typeof DEAD_LETTER_CODES.ENTITY_TOO_LARGE;
  reason: string;
  /** The entity's current version (for a command's `invalid` result). */
  version?: number;
}

export type FoldOutcome = { changed: boolean; verdict?: CommandVerdict; refused?: undefined } | { refused: Refusal };

/** Reasons we write into dead letters and results: the error's message, bounded, never its stack. */
const MAX_FAILURE_REASON = 500;

/**
 * Folds one consumed record into the unit through the one aggregate path: an event or a
 * command. A record that cannot be decoded or validated, or on which the domain throws or that
 * would grow its entity past ENTITY_MAX_BYTES, becomes a dead letter with its reason (a command:
 * an `invalid` result). Synchronous on purpose: the fetch loop never waits for anything but this.
 * Throws only when the store fails, or on a bug.
 */
export function foldRecord(unit: UnitOfWork, record: FoldInput, ctx: FoldContext): void {
  const { topic, message: m } = record;
  const isCommand = topic === ctx.commandsTopic;
  let input: AggregateInput;
  let key: string;
  try {
    if (isCommand) {
      const command = decodeCommand(m.key, m.value);
      input = { kind: 'command', command };
      key = command.key;
    } else {
      const event = decodeEvent(m.key, m.value);
      let reason: string | null;
      try {
        reason = ctx.domain.validateEvent(event);
      } catch (err) {
        return deadLetter(unit, record, DEAD_LETTER_CODES.PROCESSING_FAILED, failed('validating the event', err), ctx);
      }
      if (reason) return deadLetter(unit, record, DEAD_LETTER_CODES.EVENT_INVALID, reason, ctx);
      input = { kind: 'event', event };
      key = m.key!.toString('utf8');
    }
  } catch (err) {
    if (!isDecodeError(err)) throw err;
    return deadLetter(unit, record, err.code, err.reason, ctx);
  }

  const outcome = foldInput(unit, key, input, ctx);
  if (input.kind === 'event') {
    if (outcome.refused) deadLetter(unit, record, outcome.refused.code, outcome.refused.reason, ctx);
    return;
  }
  const { refused } = outcome;
  const verdict: CommandVerdict | undefined = refused
    ? {
        outcome: 'invalid',
        reason: refused.reason,
        ...(refused.version !== undefined ? { version: refused.version } : {}),
      }
    : outcome.verdict;
  if (verdict) addResult(unit, m.key, input.command, verdict, ctx);
}

/**
 * Refuses a record whose output the broker would not take (found by isolating it): a dead letter
 * with `reason`; a decodable command also gets an `invalid` result, so its scan completes.
 */
export function refuseRecord(
  unit: UnitOfWork,
  record: FoldInput,
  code: string,
  reason: string,
  ctx: FoldContext,
): void {
  deadLetter(unit, record, code, reason, ctx);
  if (record.topic !== ctx.commandsTopic) return;
  let command: UpdateCommand;
  try {
    command = decodeCommand(record.message.key, record.message.value);
  } catch {
    return; // not a command at all: the dead letter says why
  }
  unit.results.push({
    key: record.message.key,
    value: encodeCommandResult(result(command, { outcome: 'invalid', reason: `dead-lettered: ${reason}` }, ctx)),
  });
}

/**
 * Applies one decoded input to the unit's cache; says whether it changed the entity and the
 * command verdict, or why it was refused (the domain threw, or the entity would be too large).
 * The current entity is read first and outside the guard: a store failure fails the task.
 */
export function foldInput(unit: UnitOfWork, key: string, input: AggregateInput, ctx: FoldContext): FoldOutcome {
  const current = ctx.current(key);
  const version = current ? { version: current.version } : {};
  let next: StoredEntity | null | undefined;
  let verdict: CommandVerdict | undefined;
  let bytes: Buffer | undefined;
  try {
    ({ next, verdict } = aggregate(ctx.domain, key, input, current));
    // Encoded at commit, once per key per unit (unitChanges), unless only the bytes can tell
    // whether the entity fits: then they are measured here and kept for the changelog.
    if (next && storedEntitySizeBound(next) > ctx.entityMaxBytes) bytes = encodeStoredEntity(next);
  } catch (err) {
    const what = input.kind === 'command' ? 'the action' : 'applying the event';
    return { refused: { code: DEAD_LETTER_CODES.PROCESSING_FAILED, reason: failed(what, err), ...version } };
  }
  if (bytes && bytes.length > ctx.entityMaxBytes) {
    const reason = `the entity would take ${bytes.length} bytes, over the limit of ${ctx.entityMaxBytes} (ENTITY_MAX_BYTES)`;
    return { refused: { code: DEAD_LETTER_CODES.ENTITY_TOO_LARGE, reason, ...version } };
  }
  if (next === null) unit.delete(key);
  else if (next !== undefined) unit.put(key, next, bytes);
  if (input.kind === 'event') {
    if (next === undefined) unit.eventOutcomes.unchanged++;
    else unit.eventOutcomes.changed++;
  }
  return { changed: next !== undefined, ...(verdict ? { verdict } : {}) };
}

/** `<what> failed: <message>`, bounded. */
export function failed(what: string, err: unknown): string {
  let message: string;
  try {
    message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  } catch {
    message = 'an unprintable value was thrown';
  }
  const reason = `${what} failed: ${message}`;
  return reason.length > MAX_FAILURE_REASON ? `${reason.slice(0, MAX_FAILURE_REASON)}…` : reason;
}

function deadLetter(unit: UnitOfWork, record: FoldInput, code: string, reason: string, ctx: FoldContext): void {
  const { topic, partition, message: m } = record;
  const source: DeadLetterSource = {
    topic,
    partition,
    offset: m.offset,
    key: m.key,
    value: m.value,
    headers: m.headers,
  };
  unit.deadLetters.push(deadLetterRecord(source, { code, reason }, ctx.now(), ctx.deadLetterMaxBytes));
  if (topic === ctx.commandsTopic) unit.countCommand('dead_letter');
  else unit.eventOutcomes.dead_letter++;
}

function addResult(
  unit: UnitOfWork,
  messageKey: Buffer | null,
  command: UpdateCommand,
  verdict: CommandVerdict,
  ctx: FoldContext,
): void {
  unit.results.push({ key: messageKey, value: encodeCommandResult(result(command, verdict, ctx)) });
  unit.countCommand(verdict.outcome);
}

function result(command: UpdateCommand, verdict: CommandVerdict, ctx: FoldContext): CommandResult {
  return {
    commandId: command.commandId,
    scanId: command.scanId,
    key: command.key,
    outcome: verdict.outcome,
    ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}),
    ...(verdict.version !== undefined ? { version: verdict.version } : {}),
    processedAt: ctx.now(),
  };
}
