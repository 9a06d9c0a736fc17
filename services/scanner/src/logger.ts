import pino, { type DestinationStream, type Logger } from 'pino';

/** Wherever a token could appear in a log object, it is replaced before the line is written. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'request.headers.authorization',
  'headers.authorization',
  'authorization',
  'apiToken',
  'config.apiToken',
  'token',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'scanner' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination === undefined ? pino(options) : pino(options, destination);
}
