import { bearerToken, tokensMatch } from '../src/http/bearer';

describe('bearer token', () => {
  it('matches only the exact token', () => {
    const token = 'correct-horse-battery-staple';
    expect(tokensMatch(token, token)).toBe(true);
    expect(tokensMatch(`${token} `, token)).toBe(false);
    expect(tokensMatch('correct-horse-battery-stapl', token)).toBe(false);
    expect(tokensMatch('', token)).toBe(false);
    expect(tokensMatch('x'.repeat(10_000), token)).toBe(false); // different lengths do not throw
  });

  it('reads the token of a Bearer authorization header', () => {
    expect(bearerToken('Bearer abc.def')).toBe('abc.def');
    expect(bearerToken('bearer   abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer ')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
