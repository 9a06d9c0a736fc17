import { createServiceLogger, runService } from '@state-relay/service-kit';
import { buildApp } from './http/app';
import { loadConfig } from './config';
import { createScannerMetrics } from './metrics';
import { Scanner } from './scanner';

void runService({
  name: 'scanner',
  loadConfig,
  createLogger: (c) =>
    createServiceLogger({ service: 'scanner', app: c.appId, level: c.logLevel }).child({ scanner: c.scannerId }),
  stoppingMessage: 'stopping: the running scan stops at its next chunk boundary',
  async build(config, logger) {
    const metrics = createScannerMetrics();
    let scanner: Scanner;
    try {
      scanner = new Scanner({ config, logger, metrics });
    } catch (err) {
      throw new Error(`cannot open the scanner databases in ${config.stateDir}`, { cause: err });
    }
    const app = buildApp({
      scans: scanner.service,
      replica: scanner.replicaHealth,
      metrics,
      logger,
      apiToken: config.apiToken,
      maxBodyBytes: config.maxBodyBytes,
      schedules: scanner.schedules,
      idempotency: scanner.idempotency,
      commandLag: scanner.commandLag,
      processors: config.processors,
      processorSampler: scanner.processors,
    });
    await app.listen({ host: config.httpHost, port: config.httpPort });
    return {
      async start(stopping) {
        await scanner.start(); // an AbortedError when stopped while waiting for the topics
        // Schedules start scans once the engine runs; a run missed while the scanner was down runs once now.
        if (!stopping.aborted) scanner.scheduler.start();
      },
      async stop() {
        scanner.scheduler.stop();
        await app.close();
        await scanner.stop();
      },
    };
  },
});
