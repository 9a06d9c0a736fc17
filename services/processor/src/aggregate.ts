import type { EntityDomain } from '@state-relay/domain';
import {
  hasSeen,
  rememberCommand,
  type CommandOutcome,
  type DomainEvent,
  type StoredEntity,
  type UpdateCommand,
} from '@state-relay/contracts';
import { applyAction, evaluateCondition, RuleApplyError, validateAction, validateCondition } from '@state-relay/rules';

/** An input of the aggregate: an ordinary event, or an update command relayed by the scanner. */
export type AggregateInput = { kind: 'event'; event: DomainEvent } | { kind: 'command'; command: UpdateCommand };

export interface CommandVerdict {
  outcome: CommandOutcome;
  reason?: string;
  /** The entity's version after the command (or as found). */
  version?: number;
}

export interface AggregateResult {
  /** The entity afterwards: undefined = unchanged, null = deleted (tombstone). */
  next: StoredEntity | null | undefined;
  /** Set for commands: each command yields exactly one verdict. */
  verdict?: CommandVerdict;
}

/**
 * The one path every change takes: `aggregate(key, input, current)`. Events fold through the
 * domain; commands are re-checked against the *current* value (condition, expected version)
 * and applied through the same next-entity construction, so a command has no side door
 * into the store. Pure: no clock, no I/O.
 */
export function aggregate(
  domain: EntityDomain,
  key: string,
  input: AggregateInput,
  current: StoredEntity | undefined,
): AggregateResult {
  return input.kind === 'event'
    ? applyEvent(domain, key, input.event, current)
    : applyCommand(domain, input.command, current);
}

function applyEvent(
  domain: EntityDomain,
  key: string,
  event: DomainEvent,
  current: StoredEntity | undefined,
): AggregateResult {
  const value = domain.applyEvent(key, event, current?.value);
  if (value === null) return { next: current ? null : undefined };
  if (current && value === current.value) return { next: undefined };
  return { next: { version: (current?.version ?? 0) + 1, value, seen: current?.seen ?? '' } };
}

function applyCommand(
  domain: EntityDomain,
  command: UpdateCommand,
  current: StoredEntity | undefined,
): AggregateResult {
  if (current && hasSeen(current.seen, command.commandId)) {
    return { next: undefined, verdict: { outcome: 'duplicate', version: current.version } };
  }
  const issues = [
    ...validateCondition(command.condition, '/condition'),
    ...validateAction(command.action, '/action', Object.keys(domain.domainActions)),
  ];
  if (issues.length > 0) {
    const reason = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
    return {
      next: undefined,
      verdict: { outcome: 'invalid', reason, ...(current ? { version: current.version } : {}) },
    };
  }
  if (!current) return { next: undefined, verdict: { outcome: 'not_found' } };

  // Outcomes that do not change the value still record the id (meta-only, same version),
  // so a re-emitted command is recognised as a duplicate instead of being judged again.
  const seen = (outcome: CommandOutcome, reason?: string): AggregateResult => ({
    next: { ...current, seen: rememberCommand(current.seen, command.commandId) },
    verdict: { outcome, version: current.version, ...(reason ? { reason } : {}) },
  });

  if (command.expectedVersion !== undefined && command.expectedVersion !== current.version) {
    return seen('version_conflict', `expected version ${command.expectedVersion}, found ${current.version}`);
  }
  const ctx = { asOf: command.asOf };
  if (!evaluateCondition(command.condition, current.value, ctx)) return seen('condition_false');

  let outcome;
  try {
    outcome = applyAction(command.action, current.value, ctx, domain.domainActions);
  } catch (err) {
    if (err instanceof RuleApplyError) return seen('invalid', err.message);
    throw err;
  }
  if (outcome.kind === 'delete') return { next: null, verdict: { outcome: 'applied', version: current.version + 1 } };
  const version = current.version + 1;
  return {
    next: { version, value: outcome.value, seen: rememberCommand(current.seen, command.commandId) },
    verdict: { outcome: 'applied', version },
  };
}
