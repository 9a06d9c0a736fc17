import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DECODE_ERROR_CODES, DecodeError, isDecodeError } from '../src';

describe('DecodeError', () => {
  it('is never retriable and carries code, reason and cause as enumerable fields', () => {
    const cause = new SyntaxError('bad');
    const err = new DecodeError('NOT_JSON', 'value: not valid JSON', cause);
    expect(err).toBeInstanceOf(Error);
    expect(isDecodeError(err)).toBe(true);
    expect(err.message).toBe('NOT_JSON: value: not valid JSON');
    expect({ ...err }).toMatchObject({ code: 'NOT_JSON', reason: 'value: not valid JSON', retriable: false, cause });
  });

  it('has every code documented in the README', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    for (const code of Object.values(DECODE_ERROR_CODES)) expect(readme).toContain(`\`${code}\``);
  });
});
