import fc from 'fast-check';
import { jsonSyntaxError, lineAndColumn, parseJsonQuietly } from '../src/cli/json-input';

const SECRET = 'cli-secret-token-0123456789abcdef';

describe('JSON from a file or an argument, its errors never quoting it', () => {
  it.each([
    [SECRET, 1, 1, 'expected a JSON value'],
    [`{"condition": ${SECRET}}`, 1, 15, 'expected a JSON value'],
    ['{"a": 1,}', 1, 9, 'expected a property name in double quotes'],
    ['{\n  "a": tru\n}', 2, 8, 'expected a JSON value'],
    ['[1 2]', 1, 4, 'expected "," or "]"'],
    ['{"a" 1}', 1, 6, 'expected ":" after a property name'],
    ['"abc', 1, 5, 'a string that is never closed'],
    ['"a\\x"', 1, 4, 'a bad escape in a string'],
    ['"\\u12g4"', 1, 6, 'a bad \\u escape in a string'],
    ['1.', 1, 3, 'expected a digit after the decimal point'],
    ['{} trailing', 1, 4, 'unexpected text after the JSON value'],
    ['', 1, 1, 'the input ends where a value is expected'],
  ])('%j: line %i, column %i: %s', (text, line, column, reason) => {
    const found = jsonSyntaxError(text);
    expect(found && { ...lineAndColumn(text, found.offset), reason: found.reason }).toEqual({ line, column, reason });
    expect(() => parseJsonQuietly(text)).toThrow(`not valid JSON at line ${line}, column ${column}: ${reason}`);
  });

  it('never quotes the input', () => {
    for (const text of [SECRET, `${SECRET}\n`, `{"token": "${SECRET}"`, `["${SECRET}" x]`]) {
      expect(() => parseJsonQuietly(text)).toThrow(/^not valid JSON at line \d+, column \d+: /);
      expect(() => parseJsonQuietly(text)).not.toThrow(SECRET.slice(0, 4));
    }
  });

  it('finds an error exactly where JSON.parse finds one', () => {
    const parses = (s: string) => {
      try {
        JSON.parse(s);
        return true;
      } catch {
        return false;
      }
    };
    // Valid JSON with one character inserted, removed or replaced, and arbitrary short strings.
    const edited = fc
      .tuple(
        fc.json(),
        fc.nat(),
        fc.constantFrom('', ',', '"', '\\', '{', ']', ':', '0', '-', '.', 'e', 'u', ' ', '\u0001'),
        fc.boolean(),
      )
      .map(([json, at, ch, replace]) => {
        const i = at % (json.length + 1);
        return json.slice(0, i) + ch + json.slice(replace ? i + 1 : i);
      });
    fc.assert(
      fc.property(fc.oneof(edited, fc.string({ maxLength: 12 })), (text) => {
        expect(jsonSyntaxError(text) === undefined).toBe(parses(text));
      }),
      { numRuns: 5_000 },
    );
  });

  it('reads deep nesting without recursion', () => {
    expect(jsonSyntaxError('['.repeat(200_000))).toEqual({
      offset: 200_000,
      reason: 'the input ends where a value is expected',
    });
  });
});
