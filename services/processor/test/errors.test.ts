import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERRORS } from '../src/errors';

describe('processor error codes', () => {
  const readme = readFileSync(join(__dirname, '../README.md'), 'utf8');

  it.each(Object.entries(ERRORS))('%s is documented in the README with its status', (code, { status }) => {
    const row = readme.split('\n').find((line) => line.startsWith(`| \`${code}\``));
    expect(row).toBeDefined();
    expect(row).toMatch(new RegExp(`\\| ${status}\\s+\\|`));
  });
});
