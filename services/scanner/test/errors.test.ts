import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERRORS } from '../src/errors';
import { toErrorReply, validationIssues } from '@state-relay/service-kit';

describe('error codes', () => {
  const readme = readFileSync(join(__dirname, '../README.md'), 'utf8');

  it.each(Object.entries(ERRORS))('%s is documented in the README with its status', (code, { status }) => {
    const row = readme.split('\n').find((line) => line.startsWith(`| \`${code}\``));
    expect(row).toBeDefined();
    expect(row).toMatch(status >= 500 && code !== 'internal_error' ? /\| —\s+\|/ : new RegExp(`\\| ${status}\\s+\\|`));
  });

  it('turns anything unexpected into a 500 that says nothing more', () => {
    expect(toErrorReply(new Error('SQLITE_FULL: /data/scans.sqlite'), ERRORS, 1)).toEqual({
      status: 500,
      body: { error: 'internal_error', message: 'internal error' },
    });
  });

  it('names the offending field of each ajv error as a pointer under its request part', () => {
    expect(
      validationIssues(
        [
          { instancePath: '', keyword: 'additionalProperties', params: { additionalProperty: 'a/b~c' } },
          { instancePath: '/options', keyword: 'required', params: { missingProperty: 'rate' } },
          { instancePath: '/asOf', keyword: 'type', params: {}, message: 'must be string' },
          { instancePath: '/asOf', keyword: 'anyOf', params: {} },
        ],
        'body',
      ),
    ).toEqual([
      { path: '/body/a~1b~0c', message: 'unknown property "a/b~c"' },
      { path: '/body/options/rate', message: 'required' },
      { path: '/body/asOf', message: 'does not match any of the allowed types: must be string' },
    ]);
  });
});
