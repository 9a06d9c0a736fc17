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

export interface ServiceLoggerOptions {
  /** `service` on every line: which service wrote it. */
  service: string;
  /** `app` on every line: the deployment (APP_ID) it belongs to. */
  app?: string;
  /** LOG_LEVEL. */
  level: string;
  /** stdout unless given (tests collect lines). */
  destination?: DestinationStream;
}

/** The one logger of a service process, JSON on stdout, tokens redacted. */
export function createServiceLogger({ service, app, level, destination }: ServiceLoggerOptions): Logger {
  const options = {
    level,
    base: app === undefined ? { service } : { service, app },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
