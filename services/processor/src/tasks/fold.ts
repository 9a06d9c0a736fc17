import type { EntityDomain } from '@state-relay/domain';
import {
  decodeCommand,
  decodeEvent,
  deadLetterRecord,
  encodeCommandResult,
  isDecodeError,
  type CommandResult,
  type StoredEntity,
} from '@state-relay/contracts';
import type { KafkaMessage } from 'kafkajs';
import { aggregate, type AggregateInput, type CommandVerdict } from '../aggregate';
import type { UnitOfWork } from './unit-of-work';

export interface FoldContext {
  domain: EntityDomain;
  commandsTopic: string;
  /** The current entity (open unit, then committing unit, then the store). */
  current: (key: string) => StoredEntity | undefined;
  now: () => number;
}

export interface FoldInput {
  topic: string;
  partition: number;
  message: KafkaMessage;
}

/**
 * Folds one consumed record into the unit through the one aggregate path: an event or a
 * command; a record that cannot be decoded or validated becomes a dead letter with its reason.
 * Synchronous on purpose: the fetch loop never waits for anything but this.
 */
export function foldRecord(unit: UnitOfWork, { topic, partition, message: m }: FoldInput, ctx: FoldContext): void {
  const isCommand = topic === ctx.commandsTopic;
  const source = { topic, partition, offset: m.offset, key: m.key, value: m.value, headers: m.headers };
  let input: AggregateInput;
  let key: string;
  try {
    if (isCommand) {
      const command = decodeCommand(m.key, m.value);
      input = { kind: 'command', command };
      key = command.key;
    } else {
      const event = decodeEvent(m.key, m.value);
      const reason = ctx.domain.validateEvent(event);
      if (reason) {
        unit.deadLetters.push(deadLetterRecord(source, { code: 'EVENT_INVALID', reason }, ctx.now()));
        unit.eventOutcomes.dead_letter++;
        return;
      }
      input = { kind: 'event', event };
      key = m.key!.toString('utf8');
    }
  } catch (err) {
    if (!isDecodeError(err)) throw err;
    unit.deadLetters.push(deadLetterRecord(source, { code: err.code, reason: err.reason }, ctx.now()));
    if (isCommand) unit.countCommand('dead_letter');
    else unit.eventOutcomes.dead_letter++;
    return;
  }

  const { verdict } = foldInput(unit, key, input, ctx);
  if (input.kind === 'command' && verdict) {
    const result: CommandResult = {
      commandId: input.command.commandId,
      scanId: input.command.scanId,
      key,
      outcome: verdict.outcome,
      ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}),
      ...(verdict.version !== undefined ? { version: verdict.version } : {}),
      processedAt: ctx.now(),
    };
    unit.results.push({ key: m.key, value: encodeCommandResult(result) });
    unit.countCommand(verdict.outcome);
  }
}

/** Applies one decoded input to the unit's cache; says whether it changed the entity, and the command verdict. */
export function foldInput(
  unit: UnitOfWork,
  key: string,
  input: AggregateInput,
  ctx: FoldContext,
): { changed: boolean; verdict?: CommandVerdict } {
  const { next, verdict } = aggregate(ctx.domain, key, input, ctx.current(key));
  if (next === null) unit.cache.delete(key);
  else if (next !== undefined) unit.cache.put(key, next);
  if (input.kind === 'event') {
    if (next === undefined) unit.eventOutcomes.unchanged++;
    else unit.eventOutcomes.changed++;
  }
  return { changed: next !== undefined, ...(verdict ? { verdict } : {}) };
}
