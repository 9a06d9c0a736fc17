import fc from 'fast-check';
import { bearerToken, tokensMatch } from '../src/http/bearer';

// The regular expression bearerToken replaced: the oracle of its meaning, run here on short inputs
// only (it backtracks quadratically on a long run of blanks).
const FORMER = /^Bearer[ \t]+([^\s].*?)[ \t]*$/i;

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
    expect(bearerToken('BEARER\tabc\t')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer ')).toBeUndefined();
    expect(bearerToken('Bearerabc')).toBeUndefined();
    expect(bearerToken('Bearer \u00a0abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  it('reads a header as the former regular expression did', () => {
    const alphabet = [
      'B',
      'b',
      'e',
      'E',
      'a',
      'r',
      'R',
      'x',
      '.',
      ' ',
      ' ',
      '\t',
      '\n',
      '\r',
      '\v',
      '\u00a0',
      '\u2028',
    ];
    const header = fc
      .tuple(
        fc.constantFrom('Bearer', 'bEaReR', 'Beare', 'Basic', ''),
        fc.array(fc.constantFrom(...alphabet), { maxLength: 12 }),
      )
      .map(([scheme, rest]) => scheme + rest.join(''));
    fc.assert(
      fc.property(header, (h) => expect(bearerToken(h)).toBe(FORMER.exec(h)?.[1])),
      { numRuns: 5_000 },
    );
  });

  it('runs no regular expression on the header, however long', () => {
    // A long run of blanks before a non-blank: what made the former expression backtrack.
    const header = `Bearer a${' '.repeat(20_000)}!`;
    const exec = jest.spyOn(RegExp.prototype, 'exec');
    try {
      expect(bearerToken(header)).toBe(header.slice('Bearer '.length));
      expect(exec).not.toHaveBeenCalled();
    } finally {
      exec.mockRestore();
    }
  });
});
