import { checkChangelogName, EnvVar, MIN_TOKEN_LENGTH } from '../src';

describe('the checks both services make', () => {
  it('reports APP_ID and STORE_NAME that name no valid changelog topic, and skips them when either is unset', () => {
    const problems: string[] = [];
    checkChangelogName({ APP_ID: 'a'.repeat(200), STORE_NAME: 'b'.repeat(200) }, problems);
    checkChangelogName({ APP_ID: 'app' }, problems);
    checkChangelogName({ APP_ID: 'app', STORE_NAME: 'store' }, problems);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^APP_ID and STORE_NAME: /);
  });

  it('a token is at least MIN_TOKEN_LENGTH long and its problem never quotes it', () => {
    const token = EnvVar.token({ description: 'd' });
    expect(token.minLength).toBe(MIN_TOKEN_LENGTH);
    expect(JSON.stringify(token)).not.toContain('{value}');
  });
});
