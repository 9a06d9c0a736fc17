import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as store from '../src';

describe('store errors', () => {
  const codes = Object.values(store.StoreErrorCodes);
  const classes = Object.values(store).filter(
    (v): v is typeof store.StoreError & { code: string } => typeof v === 'function' && 'code' in v,
  );

  it('every code has exactly one error class, and every class a known code', () => {
    expect(classes.map((c) => c.code).sort()).toEqual([...codes].sort());
  });

  it('every code is documented in the README', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    for (const code of codes) expect(readme).toContain(`\`${code}\``);
  });

  it('errors carry code, cause and retriable as enumerable fields, so logs show them', () => {
    const cause = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const err = new store.StoreBusyError('commit', cause);
    expect(err).toBeInstanceOf(store.StoreError);
    expect(Object.keys(err)).toEqual(expect.arrayContaining(['code', 'cause', 'retriable']));
    expect(err).toMatchObject({ name: 'StoreBusyError', code: 'STORE_BUSY', retriable: true, cause });
  });
});
