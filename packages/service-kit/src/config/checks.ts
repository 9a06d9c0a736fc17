// Checks both services make of their environment, written once.
import { changelogTopicName } from '@state-relay/contracts';

/** The shortest bearer token either service accepts. */
export const MIN_TOKEN_LENGTH = 16;

/** A refinement: APP_ID and STORE_NAME must together name a valid changelog topic. */
export function checkChangelogName(v: { APP_ID?: string; STORE_NAME?: string }, problems: string[]): void {
  if (v.APP_ID === undefined || v.STORE_NAME === undefined) return;
  try {
    changelogTopicName(v.APP_ID, v.STORE_NAME);
  } catch (err) {
    problems.push(`APP_ID and STORE_NAME: ${(err as Error).message}`);
  }
}

/**
 * Token values that are public: shipped in .env.example, the docs or the repository's scripts.
 * A deployment guarded by one of them is guarded by nothing.
 */
export const KNOWN_PLACEHOLDER_TOKENS: readonly string[] = [
  'change-me-to-a-long-random-token', // .env.example
  'compose-check-token-0123456789', // scripts/test.sh (only ever `compose config`)
];

/** Words a placeholder is made of; a token containing one (separators aside) is refused. */
const PLACEHOLDER_WORDS = ['changeme', 'replaceme', 'placeholder', 'yourtoken', 'yoursecret', 'example'];

/** Words a guessable token is made of: each counts as one symbol, not one per letter. */
const COMMON_WORDS = ['password', 'passwd', 'secret', 'token', 'admin', 'letmein', 'qwerty', 'default', 'test'];

/**
 * The least estimated entropy a token must have. A random 16-character base64url token estimates
 * at about 96 bits here, `openssl rand -hex 8` at about 80; `test-token-0123456789abcdef` at 37.
 */
export const MIN_TOKEN_BITS = 64;
/** Below this many bits of character entropy (length times Shannon entropy) a token repeats too much. */
const MIN_CHARACTER_BITS = 40;

/** How to make a good token, for the problem sentences. */
export const TOKEN_RECIPE = `node -e 'console.log(require("crypto").randomBytes(24).toString("base64url"))'`;

/**
 * Why `token` must not guard an API, or undefined when it may: a known placeholder, or too little
 * estimated entropy (repeats, runs such as 0123456789 or abcdef, common words). Never quotes it.
 */
export function tokenStrengthProblem(token: string): string | undefined {
  const squashed = token.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (KNOWN_PLACEHOLDER_TOKENS.includes(token) || PLACEHOLDER_WORDS.some((w) => squashed.includes(w))) {
    return `is a placeholder (a public example value); generate a random one: ${TOKEN_RECIPE}`;
  }
  const bits = Math.min(patternBits(token), characterBits(token) >= MIN_CHARACTER_BITS ? Infinity : 0);
  if (bits < MIN_TOKEN_BITS) {
    return `is too easy to guess (repeated characters, runs such as 12345 or common words); generate a random one: ${TOKEN_RECIPE}`;
  }
  return undefined;
}

/** Length times the Shannon entropy of the characters' distribution. */
function characterBits(token: string): number {
  const chars = [...token];
  const counts = new Map<string, number>();
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  let perChar = 0;
  for (const n of counts.values()) perChar -= (n / chars.length) * Math.log2(n / chars.length);
  return perChar * chars.length;
}

/**
 * Symbols times the bits of one symbol of the token's alphabet, where a common word, a run of one
 * character or a run of consecutive code points (3 or more) is one symbol.
 */
function patternBits(token: string): number {
  const chars = [...token];
  const lower = token.toLowerCase();
  // Words are looked for only where string and code point indexes agree.
  const aligned = chars.length === token.length && lower.length === token.length;
  let symbols = 0;
  let i = 0;
  while (i < chars.length) {
    symbols++;
    const word = aligned ? COMMON_WORDS.find((w) => lower.startsWith(w, i)) : undefined;
    if (word !== undefined) {
      i += word.length;
      continue;
    }
    i += runLength(chars, i);
  }
  let pool = 0;
  if (/[a-z]/.test(token)) pool += 26;
  if (/[A-Z]/.test(token)) pool += 26;
  if (/[0-9]/.test(token)) pool += 10;
  if (/[^A-Za-z0-9]/.test(token)) pool += 33;
  return symbols * Math.log2(Math.max(pool, 2));
}

/** The length of the run starting at `i`: the same step (0, +1 or -1) between code points, at least 3 long; else 1. */
function runLength(chars: string[], i: number): number {
  const code = (k: number) => chars[k]!.codePointAt(0)!;
  if (i + 2 >= chars.length) return 1;
  const step = code(i + 1) - code(i);
  if (Math.abs(step) > 1 || code(i + 2) - code(i + 1) !== step) return 1;
  let end = i + 2;
  while (end + 1 < chars.length && code(end + 1) - code(end) === step) end++;
  return end - i + 1;
}
