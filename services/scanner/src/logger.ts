import { createServiceLogger } from '@state-relay/service-kit';
import type { DestinationStream, Logger } from 'pino';

export { REDACTED_PATHS } from '@state-relay/service-kit';

/** The scanner's logger (`service: "scanner"`, tokens redacted); `app` once the config names it. */
export function createLogger(level: string, destination?: DestinationStream, app?: string): Logger {
  return createServiceLogger({ service: 'scanner', level, destination, app });
}
