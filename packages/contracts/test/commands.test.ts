import { commandIdFor, decodeCommand, encodeCommand, type UpdateCommand } from '../src';
import { decodeFailure, json, key } from './helpers';

const command: UpdateCommand = {
  commandId: commandIdFor('scan-1', 'acct-000001'),
  scanId: 'scan-1',
  key: 'acct-000001',
  asOf: 1_700_000_000_000,
  condition: { field: 'status', op: 'eq', value: 'active' },
  action: { domain: 'mark_dormant' },
  expectedVersion: 3,
  issuedAt: 1_700_000_000_500,
};

describe('decodeCommand', () => {
  it('round-trips a command through encodeCommand', () => {
    expect(decodeCommand(key(command.key), encodeCommand(command))).toEqual(command);
    const { expectedVersion: _, ...withoutVersion } = command;
    const decoded = decodeCommand(key(command.key), encodeCommand(withoutVersion));
    expect(decoded).toEqual(withoutVersion);
    expect('expectedVersion' in decoded).toBe(false);
  });

  it('accepts any condition and action object: their grammar is the processor’s to judge', () => {
    const odd = { ...command, condition: { op: 'nonsense' }, action: { whatever: 1 } };
    expect(decodeCommand(key(command.key), json(odd))).toMatchObject({ condition: { op: 'nonsense' } });
  });

  it('rejects a `key` field that differs from the message key with KEY_MISMATCH', () => {
    const err = decodeFailure(() => decodeCommand(key('acct-000002'), encodeCommand(command)));
    expect(err.code).toBe('KEY_MISMATCH');
    expect(err.reason).toBe('value.key: does not equal the message key');
  });

  it('rejects a bad envelope with SCHEMA_INVALID naming the field', () => {
    const reasonFor = (patch: Record<string, unknown>) =>
      decodeFailure(() => decodeCommand(key(command.key), json({ ...command, ...patch }))).reason;
    expect(reasonFor({ commandId: '' })).toBe(
      'value.commandId: expected a non-empty string of at most 200 characters, got an empty string',
    );
    expect(reasonFor({ scanId: 'x'.repeat(201) })).toBe(
      'value.scanId: expected a non-empty string of at most 200 characters, got a string of 201 characters',
    );
    expect(reasonFor({ key: 42 })).toBe('value.key: expected a string equal to the message key, got the number 42');
    expect(reasonFor({ asOf: '2024-01-01' })).toBe(
      'value.asOf: expected a finite number, got a string of 10 characters',
    );
    expect(reasonFor({ issuedAt: undefined })).toBe('value.issuedAt: expected a finite number, got nothing');
    expect(reasonFor({ expectedVersion: -1 })).toBe(
      'value.expectedVersion: expected a non-negative integer, got the number -1',
    );
    expect(reasonFor({ expectedVersion: 1.5 })).toBe(
      'value.expectedVersion: expected a non-negative integer, got the number 1.5',
    );
    expect(reasonFor({ condition: undefined })).toBe('value.condition: expected an object, got nothing');
    expect(reasonFor({ action: ['set'] })).toBe('value.action: expected an object, got an array');
  });

  it('rejects a missing key or value before looking at the envelope', () => {
    expect(decodeFailure(() => decodeCommand(null, encodeCommand(command))).code).toBe('KEY_MISSING');
    expect(decodeFailure(() => decodeCommand(key(command.key), null)).code).toBe('VALUE_MISSING');
  });
});
