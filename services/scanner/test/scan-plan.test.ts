import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { commandIdFor, decodeEvent, encodeCommand, isDecodeError, MAX_KEY_BYTES } from '@state-relay/contracts';
import { recordBytes } from '@state-relay/kafka-runtime';
import type { ReplicaRow } from '@state-relay/store';
import fc from 'fast-check';
import { InvalidRequestError } from '../src/errors';
import {
  buildCommand,
  chunkLimit,
  commandFitIssues,
  commandSizer,
  commandsPerBatch,
  MAX_COMMAND_RECORD_BYTES,
  emissionBudget,
  planScan,
  prefilterFor,
  selectMatches,
} from '../src/scans/scan-plan';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 1);
const DOMAIN_ACTIONS = ['mark_dormant', 'close'];

function issuesOf(request: Parameters<typeof planScan>[0]) {
  try {
    planScan(request, NOW, DOMAIN_ACTIONS);
  } catch (err) {
    if (err instanceof InvalidRequestError) return err.issues;
    throw err;
  }
  return [];
}

describe('planning a scan', () => {
  it('resolves asOf once: now by default, or the ISO instant or epoch ms given', () => {
    expect(planScan({ ...DORMANCY_SWEEP }, NOW, DOMAIN_ACTIONS).asOf).toBe(NOW);
    expect(planScan({ ...DORMANCY_SWEEP, asOf: '2026-01-02T03:04:05.678Z' }, NOW, DOMAIN_ACTIONS).asOf).toBe(
      Date.UTC(2026, 0, 2, 3, 4, 5, 678),
    );
    expect(planScan({ ...DORMANCY_SWEEP, asOf: '2026-01-02T00:00:00+02:00' }, NOW, DOMAIN_ACTIONS).asOf).toBe(
      Date.UTC(2026, 0, 1, 22),
    );
    expect(planScan({ ...DORMANCY_SWEEP, asOf: 1234 }, NOW, DOMAIN_ACTIONS).asOf).toBe(1234);
  });

  it('names each offending field of the rule language under /body', () => {
    expect(
      issuesOf({
        condition: { all: [{ field: 'status', op: 'eqq', value: 'active' }] },
        action: { domain: 'teleport' },
        asOf: 'yesterday',
      }),
    ).toEqual([
      { path: '/body/condition/all/0/op', message: expect.stringContaining('unknown operator "eqq"') },
      { path: '/body/action/domain', message: 'unknown domain action "teleport"; expected one of mark_dormant, close' },
      { path: '/body/asOf', message: expect.stringContaining('ISO-8601 instant with a zone') },
    ]);
  });

  it('rejects a zone-less or impossible asOf', () => {
    expect(issuesOf({ ...DORMANCY_SWEEP, asOf: '2026-01-02T00:00:00' })).toHaveLength(1);
    expect(issuesOf({ ...DORMANCY_SWEEP, asOf: '2026-13-45T00:00:00Z' })).toHaveLength(1);
    expect(issuesOf({ ...DORMANCY_SWEEP, asOf: '2026-02-30T00:00:00Z' })).toEqual([
      { path: '/body/asOf', message: expect.stringContaining('real calendar date') },
    ]);
    expect(issuesOf({ ...DORMANCY_SWEEP, asOf: '2026-04-31T12:00:00+02:00' })).toHaveLength(1);
    expect(issuesOf({ ...DORMANCY_SWEEP, asOf: 1.5 })).toEqual([{ path: '/body/asOf', message: expect.any(String) }]);
  });

  it('judges an asOf string by the events decoder’s rule: accepted alike, as the same instant', () => {
    /** The events decoder's verdict on `at`: the instant, or undefined when it refuses it. */
    const decoded = (at: string): number | undefined => {
      try {
        return decodeEvent(Buffer.from('k'), Buffer.from(JSON.stringify({ type: 't', at }))).at;
      } catch (err) {
        if (isDecodeError(err)) return undefined;
        throw err;
      }
    };
    const planned = (asOf: string): number | undefined =>
      issuesOf({ ...DORMANCY_SWEEP, asOf }).length === 0
        ? planScan({ ...DORMANCY_SWEEP, asOf }, NOW, DOMAIN_ACTIONS).asOf
        : undefined;
    const d2 = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    // Near-valid date-times, so both sides see many real and many impossible calendar dates.
    const dateTime = fc
      .tuple(
        fc.integer({ min: 1960, max: 2400 }),
        d2(14),
        d2(33),
        fc.option(fc.tuple(d2(25), d2(61), fc.option(d2(61)), fc.option(fc.integer({ min: 0, max: 999_999 }))), {
          nil: undefined,
        }),
        fc.constantFrom('Z', '+02:00', '-0130', '+24:00', '', '+05:75'),
      )
      .map(([y, mo, d, time, zone]) => {
        if (time === undefined) return `${y}-${mo}-${d}`;
        const [h, mi, s, frac] = time;
        return `${y}-${mo}-${d}T${h}:${mi}${s === null ? '' : `:${s}${frac === null ? '' : `.${frac}`}`}${zone}`;
      });
    fc.assert(
      fc.property(fc.oneof(dateTime, fc.string({ maxLength: 30 })), (text) => {
        expect(planned(text)).toBe(decoded(text));
      }),
      { numRuns: 2_000 },
    );
    expect(planned('2026-02-30T00:00:00Z')).toBeUndefined();
  });
});

describe('walking', () => {
  const row = (key: string, value: Record<string, unknown>, version = 3): ReplicaRow => ({ key, version, value });

  it('pushes the canonical sweep down to SQL', () => {
    const { filterSql, filterParams } = prefilterFor(DORMANCY_SWEEP.condition, NOW);
    expect(filterSql).toContain('json_extract');
    expect(filterParams).toContain('active');
    expect(filterParams).toContain(NOW - 30 * DAY);
  });

  it('walks without a filter when the SQL would let everything through', () => {
    expect(prefilterFor({ field: 'tags', op: 'eq', value: ['a'] }, NOW).filterSql).toBeDefined();
    expect(prefilterFor({ not: { field: 'tags', op: 'eq', value: ['a'] } }, NOW)).toEqual({ filterParams: [] });
  });

  it('re-checks every row with the rules package: the SQL is only a pre-filter', () => {
    const rows = [
      row('a', { status: 'active', lastActiveAt: NOW - 31 * DAY }),
      row('b', { status: 'active', lastActiveAt: NOW - 29 * DAY }),
      row('c', { status: 'dormant', lastActiveAt: NOW - 90 * DAY }),
      row('d', { status: 'active', lastActiveAt: String(NOW - 90 * DAY) }),
    ];
    expect(selectMatches(rows, DORMANCY_SWEEP.condition, NOW).map((r) => r.key)).toEqual(['a']);
  });

  it('builds one command per key with a deterministic id, the scan’s asOf and its rule', () => {
    const scan = { id: 'scan-1', asOf: NOW, spec: { ...DORMANCY_SWEEP, options: {} } };
    expect(buildCommand(scan, 'acct-7', 4, NOW + 5)).toEqual({
      commandId: commandIdFor('scan-1', 'acct-7'),
      scanId: 'scan-1',
      key: 'acct-7',
      asOf: NOW,
      condition: DORMANCY_SWEEP.condition,
      action: DORMANCY_SWEEP.action,
      issuedAt: NOW + 5,
    });
    const strict = { ...scan, spec: { ...scan.spec, options: { expectVersion: true } } };
    expect(buildCommand(strict, 'acct-7', 4, NOW).expectedVersion).toBe(4);
  });

  it('caps emission at maxCommands and emits nothing on a dry run', () => {
    expect(emissionBudget({}, 100, 50)).toBe(50);
    expect(emissionBudget({ maxCommands: 120 }, 100, 50)).toBe(20);
    expect(emissionBudget({ maxCommands: 120 }, 130, 50)).toBe(0);
    expect(emissionBudget({ dryRun: true }, 0, 50)).toBe(0);
  });

  it('walks whole batches when unlimited, about a second of commands per chunk when rate-limited', () => {
    expect(chunkLimit({}, 2_000, { scanned: 0, matched: 0 })).toBe(2_000);
    expect(chunkLimit({ batchSize: 500 }, 2_000, { scanned: 0, matched: 0 })).toBe(500);
    expect(chunkLimit({ batchSize: 5_000, rate: 10 }, 2_000, { scanned: 0, matched: 0 })).toBe(5_000);
    expect(chunkLimit({ rate: 50 }, 2_000, { scanned: 0, matched: 0 })).toBe(50);
    expect(chunkLimit({ rate: 50 }, 2_000, { scanned: 1_000, matched: 100 })).toBe(500);
    expect(chunkLimit({ rate: 50 }, 2_000, { scanned: 1_000, matched: 0 })).toBe(2_000);
    expect(chunkLimit({ rate: 50, dryRun: true }, 2_000, { scanned: 0, matched: 0 })).toBe(2_000);
  });

  it('sends a few thousand commands per request, or about a second’s worth under a rate', () => {
    expect(commandsPerBatch({})).toBe(2_000);
    expect(commandsPerBatch({ rate: 50 })).toBe(50);
    expect(commandsPerBatch({ rate: 0.2 })).toBe(1);
    expect(commandsPerBatch({ rate: 1e6 })).toBe(2_000);
  });
});

describe('a command’s size in the commands topic', () => {
  const spec = (value: unknown, expectVersion = false) => ({
    condition: DORMANCY_SWEEP.condition,
    action: { set: { note: value } },
    options: expectVersion ? { expectVersion } : {},
  });

  it('commandSizer bounds the record of every command closely, without encoding it', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 200, unit: 'binary' }),
        fc.string({ maxLength: 500 }),
        fc.boolean(),
        fc.nat(),
        (key, note, expectVersion, version) => {
          const scan = { id: '2b1c1e4e-7a7e-4d47-9d43-6a3f4c0de3b1', asOf: NOW, spec: spec(note, expectVersion) };
          const command = buildCommand(scan as never, key, version, NOW);
          const actual = recordBytes({ key, value: encodeCommand(command) });
          const bound = commandSizer(scan as never)(key);
          expect(bound).toBeGreaterThanOrEqual(actual);
          expect(bound - actual).toBeLessThanOrEqual(40);
        },
      ),
    );
  });

  it('accepts a 60 KB set value, and refuses one whose command could never fit, naming the action', () => {
    expect(commandFitIssues(DORMANCY_SWEEP.condition, { set: { note: 'x'.repeat(60_000) } }, {}, '/body')).toEqual([]);
    const fits = MAX_COMMAND_RECORD_BYTES - 8 * MAX_KEY_BYTES - 1_000; // the key twice (escaped in JSON), ids, framing
    expect(commandFitIssues(DORMANCY_SWEEP.condition, { set: { note: 'x'.repeat(fits) } }, {}, '/body')).toEqual([]);
    const issues = issuesOf({ ...DORMANCY_SWEEP, action: { set: { note: 'x'.repeat(MAX_COMMAND_RECORD_BYTES) } } });
    expect(issues).toEqual([
      { path: '/body/action', message: expect.stringContaining(`at most ${MAX_COMMAND_RECORD_BYTES} bytes`) },
    ]);
  });

  it('names the condition when the condition is what makes the command too large', () => {
    const condition = { field: 'status', op: 'eq', value: 'x'.repeat(MAX_COMMAND_RECORD_BYTES) };
    const issues = issuesOf({ condition, action: DORMANCY_SWEEP.action });
    expect(issues.map((i) => i.path)).toEqual(['/body/condition']);
  });
});
