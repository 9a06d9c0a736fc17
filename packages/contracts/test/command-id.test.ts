import { createHash } from 'node:crypto';
import { commandIdFor } from '../src';

describe('commandIdFor', () => {
  it('is the first 32 hex characters of sha256(scanId NUL key)', () => {
    const expected = createHash('sha256').update('scan-1\u0000acct-000001').digest('hex').slice(0, 32);
    expect(commandIdFor('scan-1', 'acct-000001')).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{32}$/);
  });

  it('is the same for the same scan and key, every time', () => {
    expect(commandIdFor('scan-1', 'acct-000001')).toBe(commandIdFor('scan-1', 'acct-000001'));
  });

  it('differs across scans, keys, and splits of the same characters', () => {
    const ids = new Set([
      commandIdFor('scan-1', 'acct-1'),
      commandIdFor('scan-2', 'acct-1'),
      commandIdFor('scan-1', 'acct-2'),
      commandIdFor('a', 'bc'),
      commandIdFor('ab', 'c'),
    ]);
    expect(ids.size).toBe(5);
  });
});
