import { accountsDomain } from '@state-relay/accounts';
import { createServiceLogger, runService } from '@state-relay/service-kit';
import { buildApp } from './http/app';
import { loadServerConfig } from './config';
import { createProcessorMetrics } from './metrics';
import { Processor } from './processor';

void runService({
  name: 'processor',
  loadConfig: loadServerConfig,
  createLogger: (c) => createServiceLogger({ service: 'processor', app: c.appId, level: c.logLevel }),
  stoppingMessage: 'stopping: finishing the running batches',
  // The token goes to the HTTP app only, never into the processor's config (or anything it logs).
  async build({ stateAuth, ...config }, logger) {
    if (stateAuth.kind === 'off') logger.warn('STATE_API_AUTH=off: GET /state/:key answers without a token');
    const metrics = createProcessorMetrics();
    const processor = new Processor({
      config,
      domain: accountsDomain,
      logger,
      metrics,
      // Thrown outside any promise: runService logs it, stops gracefully and exits 1.
      onFatal: (err) =>
        setImmediate(() => {
          throw err;
        }),
    });
    const app = buildApp({ processor, metrics, logger, stateAuth });
    await app.listen({ host: config.httpHost, port: config.httpPort });
    return {
      async start() {
        await processor.start();
        const topics = [config.eventsTopic, config.commandsTopic];
        logger.info({ topics, http: config.httpPort, stateAuth: stateAuth.kind }, 'processor started');
      },
      async stop() {
        await processor.stop();
        await app.close();
      },
    };
  },
});
