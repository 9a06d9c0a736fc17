import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';
import { ConfigError } from './errors';

/**
 * How long a graceful stop may take before the process exits 1 by itself. Shorter than the
 * 30 s compose gives a container (`stop_grace_period`) before it SIGKILLs it, so a stuck stop
 * still ends with our own log line and exit code rather than a kill.
 */
export const FORCE_EXIT_MS = 25_000;

/** What a built service does next. */
export interface ServiceLifecycle {
  /**
   * The long part of the start (provisioning, joining the group, waiting for topics). Signals are
   * handled while it runs; `signal` aborts when a stop begins, so the start can leave off.
   */
  start(signal: AbortSignal): Promise<void>;
  /** The graceful stop: once, on SIGTERM/SIGINT (or an uncaught error), or after a failed start. */
  stop(): Promise<void>;
}

export interface ServiceDefinition<C> {
  /** Names the service in its start and failure lines. */
  name: string;
  /** Throws a ConfigError for bad values: the message goes to stderr and the process exits 2. */
  loadConfig(env: NodeJS.ProcessEnv): C;
  createLogger(config: C): Logger;
  /** Opens what the service needs and starts listening; a throw here exits 1. */
  build(config: C, logger: Logger): Promise<ServiceLifecycle>;
  /** The line logged when a stop begins, saying what the stop waits for. */
  stoppingMessage?: string;
  forceExitMs?: number;
}

/**
 * The process around a service: config (exit 2 when bad), build, then start with a graceful stop
 * on SIGTERM/SIGINT (close-with-grace); exit 0 after a stop, 1 after a failed start or a stop that
 * took longer than `forceExitMs`.
 */
export async function runService<C>(
  service: ServiceDefinition<C>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  let config: C;
  try {
    config = service.loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  const logger = service.createLogger(config);
  let lifecycle: ServiceLifecycle;
  try {
    lifecycle = await service.build(config, logger);
  } catch (err) {
    logger.fatal({ err }, `${service.name} failed to start`);
    process.exit(1);
  }

  const stopping = new AbortController();
  const delay = service.forceExitMs ?? FORCE_EXIT_MS;
  closeWithGrace(
    { delay, logger, onTimeout: () => logger.error({ delayMs: delay }, 'graceful stop took too long; exiting') },
    async ({ signal, err }) => {
      stopping.abort();
      if (err) logger.fatal({ err }, 'stopping after an uncaught error');
      else logger.info({ signal }, service.stoppingMessage ?? 'stopping');
      await lifecycle.stop();
      logger.info('stopped');
    },
  );

  try {
    await lifecycle.start(stopping.signal);
  } catch (err) {
    if (stopping.signal.aborted) return; // stopped while starting: the stop ends the process
    logger.fatal({ err }, `${service.name} failed to start`);
    await lifecycle.stop().catch((stopErr: unknown) => logger.error({ err: stopErr }, 'stop after a failed start'));
    process.exit(1);
  }
}
