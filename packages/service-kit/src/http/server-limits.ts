import type { Socket } from 'node:net';
import { STATUS_CODES, type ServerOptions } from 'node:http';
import type { ErrorTable } from '../errors';

/** How long a client may take and how much header it may send; fastify's defaults leave most unbounded. */
export interface HttpServerLimits {
  /** The request line and headers must arrive within this (Node `headersTimeout`): 408 otherwise. */
  headersTimeoutMs: number;
  /** The whole request, headers and body, must arrive within this (`requestTimeout`): 408 otherwise. */
  requestTimeoutMs: number;
  /** A socket with no traffic either way for this long is closed (fastify `connectionTimeout`). */
  idleTimeoutMs: number;
  /** An idle keep-alive connection is closed after this; above common load balancers' 60 s. */
  keepAliveTimeoutMs: number;
  /** Request line plus headers, in bytes (Node `maxHeaderSize`): 431 past it. */
  maxHeaderBytes: number;
}

export const HTTP_SERVER_LIMITS: Readonly<HttpServerLimits> = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 120_000,
  keepAliveTimeoutMs: 72_000,
  maxHeaderBytes: 16_384,
};

/** The fastify options that apply the limits to the server it creates at `listen`. */
export function serverOptions(limits: HttpServerLimits) {
  const { headersTimeoutMs, requestTimeoutMs, idleTimeoutMs, keepAliveTimeoutMs, maxHeaderBytes } = limits;
  if (headersTimeoutMs > requestTimeoutMs) throw new Error('headersTimeoutMs must not exceed requestTimeoutMs');
  const http: ServerOptions = {
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    maxHeaderSize: maxHeaderBytes,
    // Node checks both timeouts only this often (30 s by default), which would stretch a 10 s bound.
    connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs),
  };
  return {
    http,
    requestTimeout: requestTimeoutMs,
    connectionTimeout: idleTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
  };
}

/** What Node reports before any request exists, answered in the error contract. */
const CLIENT_ERRORS: Record<string, { error: string; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { error: 'request_timeout', message: 'the request did not arrive in time' },
  HPE_HEADER_OVERFLOW: { error: 'headers_too_large', message: 'the request line and headers are too large' },
};

/**
 * fastify's `clientErrorHandler`: a timeout, oversized headers or a malformed request get their
 * status and a `{error, message}` body from the service's table, then the socket is closed.
 */
export function clientErrorHandler(errors: ErrorTable) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const { error, message } = CLIENT_ERRORS[err.code ?? ''] ?? {
      error: 'malformed_request',
      message: 'not a well-formed HTTP/1.1 request',
    };
    const status = errors[error]?.status ?? 400;
    const body = JSON.stringify({ error, message });
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
