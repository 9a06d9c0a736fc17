import { COMMAND_OUTCOMES, decodeCommandResult, encodeCommandResult, type CommandResult } from '../src';
import { decodeFailure, json, key } from './helpers';

const result: CommandResult = {
  commandId: 'c1',
  scanId: 's1',
  key: 'acct-000001',
  outcome: 'applied',
  version: 4,
  processedAt: 1_700_000_000_000,
};

describe('decodeCommandResult', () => {
  it('round-trips every outcome, with and without the optional fields', () => {
    for (const outcome of COMMAND_OUTCOMES) {
      const full = { ...result, outcome, reason: `because ${outcome}` };
      expect(decodeCommandResult(key(result.key), encodeCommandResult(full))).toEqual(full);
    }
    const { version: _, ...minimal } = result;
    expect(decodeCommandResult(key(result.key), encodeCommandResult(minimal))).toEqual(minimal);
  });

  it('rejects an unknown outcome and a key mismatch', () => {
    const bad = decodeFailure(() => decodeCommandResult(key(result.key), json({ ...result, outcome: 'maybe' })));
    expect(bad.code).toBe('SCHEMA_INVALID');
    expect(bad.reason).toBe(
      'value.outcome: expected one of applied, condition_false, version_conflict, not_found, duplicate, invalid, got a string of 5 characters',
    );
    expect(decodeFailure(() => decodeCommandResult(key('other'), encodeCommandResult(result))).code).toBe(
      'KEY_MISMATCH',
    );
  });

  it('encodes a long reason cut to what it reads back, so a result never becomes unreadable', () => {
    const long = { ...result, outcome: 'invalid' as const, reason: 'r'.repeat(10_000) };
    const back = decodeCommandResult(key(result.key), encodeCommandResult(long));
    expect(back.reason).toHaveLength(4096);
    expect(back.reason!.endsWith('…')).toBe(true);
  });
});
