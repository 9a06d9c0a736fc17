import { accountsDomain } from '@state-relay/accounts';
import type { StoredEntity, UpdateCommand } from '@state-relay/contracts';
import * as rules from '@state-relay/rules';
import { aggregate, RuleCache, RULE_CACHE_SIZE } from '../src/aggregate';

// A command's condition and action are validated once per scan, not per command (issue 32): the
// cache must never turn a rule it has not validated into a valid one, nor change an invalid
// command's reason.

jest.mock('@state-relay/rules', () => {
  const actual = jest.requireActual<typeof import('@state-relay/rules')>('@state-relay/rules');
  return {
    ...actual,
    validateCondition: jest.fn(actual.validateCondition),
    validateAction: jest.fn(actual.validateAction),
  };
});
const validations = () => (rules.validateCondition as jest.Mock).mock.calls.length;

const asOf = Date.UTC(2026, 10, 1);
const day = 86_400_000;
const account = (): StoredEntity => ({
  version: 3,
  value: { status: 'active', balance: 0, createdAt: asOf - 100 * day, lastActiveAt: asOf - 40 * day },
  seen: '',
});
const command = (scanId: string, key: string, over: Partial<UpdateCommand> = {}): UpdateCommand => ({
  commandId: `${scanId}/${key}`,
  scanId,
  key,
  asOf,
  // A fresh object per command, as the decoder gives them.
  condition: JSON.parse(
    '{"all":[{"field":"status","op":"eq","value":"active"},{"field":"lastActiveAt","op":"lt","value":{"$ago":"P30D"}}]}',
  ),
  action: { domain: 'mark_dormant' },
  issuedAt: asOf,
  ...over,
});
const run = (c: UpdateCommand) => aggregate(accountsDomain, c.key, { kind: 'command', command: c }, account());
/** The reason the processor gave before the cache: every issue of both validators, in order (not counted). */
const actual = jest.requireActual<typeof import('@state-relay/rules')>('@state-relay/rules');
const uncachedReason = (c: UpdateCommand) =>
  [
    ...actual.validateCondition(c.condition, '/condition'),
    ...actual.validateAction(c.action, '/action', Object.keys(accountsDomain.domainActions)),
  ]
    .map((i) => `${i.path}: ${i.message}`)
    .join('; ');

beforeEach(() => jest.clearAllMocks());

describe('RuleCache through aggregate', () => {
  it("validates a scan's rules once: its other commands reuse the verdict", () => {
    for (let i = 0; i < 5; i++) expect(run(command('scan-once', `acct-${i}`)).verdict?.outcome).toBe('applied');
    expect(validations()).toBe(1);
  });

  it('validates a command with a new rule: another scan, or other rules under a known scan id', () => {
    run(command('scan-a', 'acct-1'));
    expect(validations()).toBe(1);
    // Same scan id, another (invalid) action: not taken for the cached valid one.
    const other = command('scan-a', 'acct-2', { action: { domain: 'no_such_action' } });
    expect(run(other).verdict).toMatchObject({ outcome: 'invalid', reason: uncachedReason(other) });
    // Same scan id, the condition differs only in a nested operand.
    const nested = command('scan-a', 'acct-3', {
      condition: { field: 'lastActiveAt', op: 'lt', value: { $ago: 'P1Y' } },
    });
    expect(run(nested).verdict?.outcome).toBe('invalid');
    expect(run(command('scan-b', 'acct-4')).verdict?.outcome).toBe('applied');
    expect(validations()).toBe(4);
  });

  it('answers an invalid inline rule with invalid and the same reason text as without the cache, every time', () => {
    const bad = (key: string) =>
      command('scan-bad', key, {
        condition: {
          all: [
            { field: 'status', op: 'like', value: 'a' },
            { field: '', op: 'lt', value: { $ago: 'P1M' } },
          ],
        } as never,
        action: { set: { status: 'x' }, increment: { status: 1 } } as never,
      });
    const expected = uncachedReason(bad('acct-0'));
    expect(expected).toMatch(/unknown operator "like".*months.*also appears/);
    for (const key of ['acct-1', 'acct-2']) {
      expect(run(bad(key)).verdict).toEqual({ outcome: 'invalid', reason: expected, version: 3 });
    }
    // The not-found path answers invalid too (as before: validation comes before the lookup's outcome).
    const missing = aggregate(accountsDomain, 'acct-9', { kind: 'command', command: bad('acct-9') }, undefined);
    expect(missing.verdict).toEqual({ outcome: 'invalid', reason: expected });
  });

  it('a verdict is not changed by mutating the command it came from', () => {
    const first = command('scan-mut', 'acct-1');
    run(first);
    (first.action as { domain: string }).domain = 'no_such_action'; // the cache holds its own copy
    expect(run(first).verdict?.outcome).toBe('invalid');
    expect(run(command('scan-mut', 'acct-2')).verdict?.outcome).toBe('applied');
  });

  it('validates every time rules that are not plain JSON data (nothing cached for them)', () => {
    const weird = command('scan-weird', 'acct-1', {
      action: { domain: 'mark_dormant', params: { f: () => 1 } } as never,
    });
    run(weird);
    run(weird);
    expect(validations()).toBe(2);
  });
});

describe('RuleCache', () => {
  const valid = (scanId: string) => command(scanId, 'k');

  it(`is bounded (${RULE_CACHE_SIZE} scans by default): the oldest scan goes first, and is validated again`, () => {
    const cache = new RuleCache(accountsDomain.domainActions, 3);
    for (const s of ['s1', 's2', 's3', 's4', 's5']) expect(cache.validatedRules(valid(s))).toBeUndefined();
    expect(cache.size).toBe(3);
    expect(validations()).toBe(5);
    cache.validatedRules(valid('s5')); // kept
    expect(validations()).toBe(5);
    cache.validatedRules(valid('s1')); // evicted: validated again
    expect(validations()).toBe(6);
    expect(cache.size).toBe(3);
    expect(new RuleCache({}).capacity).toBe(RULE_CACHE_SIZE);
  });

  it('judges domain action names by the domain it was made for', () => {
    const cache = new RuleCache({});
    expect(cache.validatedRules(valid('s'))).toBe(
      '/action/domain: unknown domain action "mark_dormant"; no domain actions are registered',
    );
  });
});
