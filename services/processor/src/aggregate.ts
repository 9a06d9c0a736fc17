import type { EntityDomain } from '@state-relay/domain';
import {
  commandDigest,
  rememberDigest,
  seenHas,
  type CommandOutcome,
  type DomainEvent,
  type StoredEntity,
  type UpdateCommand,
} from '@state-relay/contracts';
import {
  applyAction,
  evaluateCondition,
  RuleApplyError,
  validateAction,
  validateCondition,
  type DomainAction,
} from '@state-relay/rules';

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
  const digest = current ? commandDigest(command.commandId) : ''; // hashed once: looked up, then remembered
  if (current && seenHas(current.seen, digest)) {
    return { next: undefined, verdict: { outcome: 'duplicate', version: current.version } };
  }
  const reason = ruleCacheOf(domain).validatedRules(command);
  if (reason !== undefined) {
    return {
      next: undefined,
      verdict: { outcome: 'invalid', reason, ...(current ? { version: current.version } : {}) },
    };
  }
  if (!current) return { next: undefined, verdict: { outcome: 'not_found' } };

  // Outcomes that do not change the value still record the id (meta-only, same version),
  // so a re-emitted command is recognised as a duplicate instead of being judged again.
  const seen = (outcome: CommandOutcome, reason?: string): AggregateResult => ({
    next: { ...current, seen: rememberDigest(current.seen, digest) },
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
    next: { version, value: outcome.value, seen: rememberDigest(current.seen, digest) },
    verdict: { outcome: 'applied', version },
  };
}

/** Rules (a scan's condition and action) a RuleCache keeps: a few scans run at once. */
export const RULE_CACHE_SIZE = 64;

interface CachedRules {
  condition: unknown;
  action: unknown;
  /** Why they are invalid (the `invalid` result's reason), or undefined. */
  reason: string | undefined;
}

/**
 * A command's condition and action validated once per scan instead of once per command. Keyed by
 * the scan id, and a hit only when the command carries the same rules (compared as JSON with a
 * private copy of those validated): a producer that sends other rules under the same scan id,
 * or an unknown scan id, gets them validated. Bounded: the oldest scan goes first.
 */
export class RuleCache {
  private readonly entries = new Map<string, CachedRules>();
  private readonly actionNames: string[];

  constructor(
    readonly domainActions: Record<string, DomainAction>,
    readonly capacity = RULE_CACHE_SIZE,
  ) {
    this.actionNames = Object.keys(domainActions);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Why the command's condition and action are not valid rules (`<path>: <problem>; ...`), or undefined. */
  validatedRules(command: Pick<UpdateCommand, 'scanId' | 'condition' | 'action'>): string | undefined {
    const cached = this.entries.get(command.scanId);
    if (cached && sameJson(cached.condition, command.condition) && sameJson(cached.action, command.action)) {
      return cached.reason;
    }
    const issues = [
      ...validateCondition(command.condition, '/condition'),
      ...validateAction(command.action, '/action', this.actionNames),
    ];
    const reason = issues.length > 0 ? issues.map((i) => `${i.path}: ${i.message}`).join('; ') : undefined;
    const copy = copyRules(command);
    if (copy) {
      this.entries.delete(command.scanId);
      if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(command.scanId, { ...copy, reason });
    }
    return reason;
  }
}

const ruleCaches = new WeakMap<EntityDomain, RuleCache>();

/** The domain's RuleCache (a new one when its domain actions were replaced). */
function ruleCacheOf(domain: EntityDomain): RuleCache {
  let cache = ruleCaches.get(domain);
  if (!cache || cache.domainActions !== domain.domainActions) {
    ruleCaches.set(domain, (cache = new RuleCache(domain.domainActions)));
  }
  return cache;
}

/** A private copy of rules that are JSON data; undefined (not cached) for anything else. */
function copyRules(command: Pick<UpdateCommand, 'condition' | 'action'>): Omit<CachedRules, 'reason'> | undefined {
  const condition = copyJson(command.condition, 0);
  const action = copyJson(command.action, 0);
  return condition === NOT_JSON || action === NOT_JSON ? undefined : { condition, action };
}

const NOT_JSON = Symbol('not JSON data');
/** Deeper rules are not cached (validation refuses them anyway; and a cycle ends here). */
const MAX_COPY_DEPTH = 128;

/** A deep copy of plain JSON data (arrays, plain objects, primitives); NOT_JSON for anything else. */
function copyJson(v: unknown, depth: number): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v !== 'object' || depth > MAX_COPY_DEPTH) return NOT_JSON;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return NOT_JSON;
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return NOT_JSON;
      const item = copyJson(v[i], depth + 1);
      if (item === NOT_JSON) return NOT_JSON;
      out.push(item);
    }
    return out;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return NOT_JSON;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const item = copyJson((v as Record<string, unknown>)[k], depth + 1);
    if (item === NOT_JSON) return NOT_JSON;
    Object.defineProperty(out, k, { value: item, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Whether `b` is the same JSON data as `a` (a cached copy: acyclic plain data): primitives equal,
 * arrays and plain objects with the same own enumerable keys in the same order and the same
 * prototype. Whatever validation could tell apart, this does too.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (!(i in b) || !sameJson(a[i], b[i])) return false;
    }
    return true;
  }
  if (Array.isArray(b)) return false;
  const ak = Object.keys(a);
  const bk = Object.keys(b);
  if (ak.length !== bk.length) return false;
  for (let i = 0; i < ak.length; i++) {
    const k = ak[i]!;
    if (k !== bk[i] || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}
