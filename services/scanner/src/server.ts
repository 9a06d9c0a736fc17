import { buildApp } from './app';
import { ConfigError, loadConfig } from './config';
import { createLogger } from './logger';
import { createScannerMetrics } from './metrics';
import { Scanner } from './scanner';
import { AbortedError } from './errors';

/** The process: config, logger, Kafka, HTTP, and a graceful stop on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel).child({ app: config.appId, scanner: config.scannerId });
  const metrics = createScannerMetrics();
  let scanner: Scanner;
  try {
    scanner = new Scanner({ config, logger, metrics });
  } catch (err) {
    logger.fatal({ err, stateDir: config.stateDir }, 'cannot open the scanner databases');
    process.exit(1);
  }
  const app = buildApp({
    scans: scanner.service,
    replica: scanner.replicaHealth,
    metrics,
    logger,
    apiToken: config.apiToken,
    maxBodyBytes: config.maxBodyBytes,
    schedules: scanner.schedules,
    commandLag: scanner.commandLag,
  });
  await app.listen({ host: config.httpHost, port: config.httpPort });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: the running scan stops at its next chunk boundary');
    const force = setTimeout(() => {
      logger.error('graceful stop took too long; exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    scanner.scheduler.stop();
    await app.close();
    await scanner.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  try {
    await scanner.start();
  } catch (err) {
    if (err instanceof AbortedError) return; // stopped while waiting for the topics
    logger.fatal({ err }, 'scanner failed to start');
    await app.close();
    await scanner.stop().catch(() => undefined);
    process.exit(1);
  }
  // Schedules start scans once the engine runs; a run missed while the scanner was down runs once now.
  if (!stopping) scanner.scheduler.start();
}

void main();
