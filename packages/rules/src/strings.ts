// Strings compare by Unicode code point (a lone surrogate counts as its own code point). That is
// the order of SQLite's byte-wise TEXT comparison over UTF-8, so the SQL pre-filter can be exact.
// JavaScript's `<` compares UTF-16 code units instead, which differs above U+FFFF.

const isHigh = (u: number) => u >= 0xd800 && u <= 0xdbff;
const isLow = (u: number) => u >= 0xdc00 && u <= 0xdfff;

/** Negative, zero or positive as `a` sorts before, with or after `b` in code point order. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a.charCodeAt(i) === b.charCodeAt(i)) continue;
    // Differing low surrogates after a shared high one: compare the whole pairs (or lone halves).
    const at = i > 0 && isHigh(a.charCodeAt(i - 1)) ? i - 1 : i;
    return (a.codePointAt(at) ?? 0) - (b.codePointAt(at) ?? 0);
  }
  // A string that is a code-unit prefix of the other also sorts first by code point.
  return a.length - b.length;
}

/** `s` starts with `prefix` as code points: "\u{1F600}" does not start with its own high surrogate. */
export function startsWithCodePoints(s: string, prefix: string): boolean {
  if (!s.startsWith(prefix)) return false;
  const n = prefix.length;
  return !(n > 0 && n < s.length && isHigh(prefix.charCodeAt(n - 1)) && isLow(s.charCodeAt(n)));
}

/** true when `s` holds half of a surrogate pair on its own (not well-formed Unicode). */
export function hasLoneSurrogate(s: string): boolean {
  return /\p{Surrogate}/u.test(s);
}
