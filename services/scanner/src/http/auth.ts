import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ScannerError } from '../errors';

/**
 * Constant-time comparison of a presented token with the configured one. Both are hashed first,
 * so the comparison takes the same time whatever their lengths and contents.
 */
export function tokensMatch(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+([^\s].*?)[ \t]*$/i.exec(header ?? '');
  return match?.[1];
}

/**
 * An onRequest hook: runs before the body is read, so an unauthenticated client never gets its
 * body parsed or validated. The error never contains the presented token.
 */
export function requireBearer(expected: string) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const presented = bearerToken(request.headers.authorization);
    if (presented === undefined)
      throw new ScannerError('unauthorized', 'a bearer token is required: Authorization: Bearer <token>');
    if (!tokensMatch(presented, expected)) throw new ScannerError('unauthorized', 'the bearer token is not valid');
  };
}
