import { accountsDomain } from '@state-relay/accounts';
import pino from 'pino';
import { buildApp } from './app';
import { ConfigError, loadServerConfig } from './config';
import { createProcessorMetrics } from './metrics';
import { Processor } from './processor';

/** The process: config, logger, Kafka, HTTP, and a graceful stop on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let loaded;
  try {
    loaded = loadServerConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  // The token goes to the HTTP app only, never into the processor's config (or anything it logs).
  const { stateAuth, ...config } = loaded;
  const logger = pino({ level: config.logLevel, base: { service: 'processor', app: config.appId } });
  if (stateAuth.kind === 'off') logger.warn('STATE_API_AUTH=off: GET /state/:key answers without a token');
  const metrics = createProcessorMetrics();
  const processor = new Processor({
    config,
    domain: accountsDomain,
    logger,
    metrics,
  });
  const app = buildApp({ processor, metrics, logger, stateAuth });
  await app.listen({ host: config.httpHost, port: config.httpPort });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing the running batches');
    const force = setTimeout(() => {
      logger.error('graceful stop took too long; exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    await processor.stop();
    await app.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  try {
    await processor.start();
    logger.info(
      { topics: [config.eventsTopic, config.commandsTopic], http: config.httpPort, stateAuth: stateAuth.kind },
      'processor started',
    );
  } catch (err) {
    logger.fatal({ err }, 'processor failed to start');
    await app.close();
    process.exit(1);
  }
}

void main();
