import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { ConfigError, EnvVar, KNOWN_PLACEHOLDER_TOKENS, loadEnv, tokenStrengthProblem } from '../src';

// Issue 34 item 3: `.env.example`'s placeholder passed the length check, so
// `cp .env.example .env && docker compose up` guarded the write API with a public value.

const ROOT = join(__dirname, '../../..');

describe('token strength', () => {
  it("refuses .env.example's value, and every value the repository ships as a placeholder", () => {
    const example = /^STATE_RELAY_API_TOKEN=(.*)$/m.exec(readFileSync(join(ROOT, '.env.example'), 'utf8'))![1]!;
    expect(KNOWN_PLACEHOLDER_TOKENS).toContain(example);
    for (const token of [...KNOWN_PLACEHOLDER_TOKENS, 'CHANGE_ME_please_0123456789', 'your-token-goes-here-xyz']) {
      expect(tokenStrengthProblem(token)).toMatch(/^is a placeholder/);
    }
  });

  it.each([
    ['one character repeated', 'aaaaaaaaaaaaaaaaaaaaaaaa'],
    ['two characters alternating', 'abababababababababab'],
    ['a run of the alphabet', 'abcdefghijklmnopqrstuvwxyz'],
    ['digits counting down', '9876543210987654321'],
    ['a common word and a run', 'password12345678'],
    ['words and runs', 'test-token-0123456789abcdef'],
    ['a short alphabet repeated', '1234123412341234123412341234'],
  ])('refuses a guessable token: %s', (_what, token) => {
    expect(tokenStrengthProblem(token)).toMatch(/^is too easy to guess/);
  });

  it('accepts random tokens of the documented recipes, every time', () => {
    for (let i = 0; i < 2_000; i++) {
      expect(tokenStrengthProblem(randomBytes(24).toString('base64url'))).toBeUndefined(); // the docs' recipe
      expect(tokenStrengthProblem(randomBytes(12).toString('base64url'))).toBeUndefined(); // 16 characters
      expect(tokenStrengthProblem(randomBytes(16).toString('hex'))).toBeUndefined(); // openssl rand -hex 16
      expect(tokenStrengthProblem(randomBytes(32).toString('base64'))).toBeUndefined(); // openssl rand -base64 32
    }
  });

  it('loadEnv names the variable, and never prints the value, whether from the environment or a _FILE', () => {
    const schema = Type.Object({
      API_TOKEN: EnvVar.token({ description: 'd' }),
      OTHER_TOKEN: Type.Optional(EnvVar.token({ description: 'd' })),
    });
    const placeholder = KNOWN_PLACEHOLDER_TOKENS[0]!;
    let err: unknown;
    try {
      loadEnv(schema, { API_TOKEN: placeholder, OTHER_TOKEN: 'abcdefghijklmnopqrstuvwxyz' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems).toEqual([
      expect.stringMatching(/^API_TOKEN is a placeholder/),
      expect.stringMatching(/^OTHER_TOKEN is too easy to guess/),
    ]);
    expect((err as Error).message).not.toContain(placeholder);
    expect((err as Error).message).not.toContain('abcdefghijklmnopqrstuvwxyz');
    const strong = randomBytes(24).toString('base64url');
    expect(loadEnv(schema, { API_TOKEN: strong })).toEqual({ API_TOKEN: strong });
  });
});
