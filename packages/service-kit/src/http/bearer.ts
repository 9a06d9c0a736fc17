import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors';

/**
 * Constant-time comparison of a presented token with the configured one. Both are hashed first,
 * so the comparison takes the same time whatever their lengths and contents.
 */
export function tokensMatch(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

const SCHEME = 'bearer';
const SPACE = 0x20;
const TAB = 0x09;
/** Blanks around the token that a header may carry and still be read. */
export const BEARER_BLANKS_ALLOWED = 64;

const isBlank = (code: number) => code === SPACE || code === TAB;
const isLineBreak = (code: number) => code === 0x0a || code === 0x0d || code === 0x2028 || code === 0x2029;

/**
 * The token of an `Authorization: Bearer <token>` header, or undefined: the scheme in any case,
 * blanks, then the token up to trailing blanks. One pass over the header, no regular expression:
 * the header is untrusted and a backtracking match of it was quadratic.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header.length <= SCHEME.length) return undefined;
  for (let i = 0; i < SCHEME.length; i++) {
    if ((header.charCodeAt(i) | 0x20) !== SCHEME.charCodeAt(i)) return undefined;
  }
  let start = SCHEME.length;
  while (start < header.length && isBlank(header.charCodeAt(start))) start++;
  if (start === SCHEME.length) return undefined; // "Bearerxyz": no blank after the scheme
  let end = header.length;
  while (end > start && isBlank(header.charCodeAt(end - 1))) end--;
  if (end === start || header.charAt(start).trim() === '') return undefined; // empty, or starts with other whitespace
  for (let i = start; i < end; i++) if (isLineBreak(header.charCodeAt(i))) return undefined;
  return header.slice(start, end);
}

/**
 * An onRequest hook: runs before the body is read, so an unauthenticated client never gets its
 * body parsed or validated. It fails with `unauthorized` (401 with WWW-Authenticate), and the
 * error never contains the presented token. A header longer than the scheme, the expected token
 * and BEARER_BLANKS_ALLOWED blanks cannot hold it, and is refused unread.
 */
export function requireBearer(expected: string) {
  const longestHeader = SCHEME.length + expected.length + BEARER_BLANKS_ALLOWED;
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const header = request.headers.authorization;
    if (header !== undefined && header.length > longestHeader)
      throw new ServiceError('unauthorized', 'the bearer token is not valid');
    const presented = bearerToken(header);
    if (presented === undefined)
      throw new ServiceError('unauthorized', 'a bearer token is required: Authorization: Bearer <token>');
    if (!tokensMatch(presented, expected)) throw new ServiceError('unauthorized', 'the bearer token is not valid');
  };
}
