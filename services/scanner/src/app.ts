import swagger from '@fastify/swagger';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { toErrorReply } from './http-errors';
import { healthRoutes } from './routes/health';
import { scanRoutes } from './routes/scans';
import { scheduleRoutes } from './routes/schedules';
import { statusPageRoutes } from './routes/status-page';
import { statusRoutes, type CommandLagSource } from './routes/status';
import type { ReplicaHealth, ScanService } from './scan-service';
import type { ScheduleService } from './schedule-service';

export interface AppDeps {
  scans: ScanService;
  replica: ReplicaHealth;
  metrics: { registry: Registry };
  logger: Logger;
  apiToken: string;
  maxBodyBytes: number;
  /** The /schedules API; without it (tests and benchmarks of scans alone) the routes are absent. */
  schedules?: ScheduleService;
  /** The processor's lag on the commands topic, for GET /status; without it the lag is null. */
  commandLag?: CommandLagSource;
}

declare module 'fastify' {
  interface FastifyInstance {
    scans: ScanService;
    replica: ReplicaHealth;
    metricsRegistry: Registry;
  }
}

/** The scanner's collaborators as decorations, so route plugins reach them typed. */
export const scannerServices = fp(
  async (app: FastifyInstance, deps: Pick<AppDeps, 'scans' | 'replica' | 'metrics'>) => {
    app.decorate('scans', deps.scans);
    app.decorate('replica', deps.replica);
    app.decorate('metricsRegistry', deps.metrics.registry);
  },
  { name: 'scanner-services', fastify: '5.x' },
);

/**
 * The scanner's HTTP surface, built without listening so tests `inject`. Validation is strict:
 * no type coercion and no silent removal of unknown properties, so a wrong type or an unknown
 * field gets a 400 that names it.
 */
export function buildApp(deps: AppDeps): FastifyInstance {
  const app = fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Request lines would log every poll of a following CLI; errors are logged by the handler below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.maxBodyBytes,
    // Above every schema's own limit, so an over-long id gets the schema's 400 naming the field.
    routerOptions: { maxParamLength: 2048 },
    // Errors the router raises before any route runs (a malformed %-escape) in the API's shape.
    frameworkErrors: (err, request, reply) => {
      const { status, body } = toErrorReply(err, deps.maxBodyBytes);
      request.log.debug({ status, error: body.error }, 'request rejected by the router');
      // The reply is not yet bound to a route here, so its typed status codes do not apply.
      const untyped = reply as unknown as { code(n: number): { send(b: unknown): void } };
      untyped.code(status).send(body);
    },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false } },
    // A `__proto__` or `constructor` key is valid JSON: parse it as an own property (JSON.parse never
    // sets a prototype) and let the schema name it like any unknown property, instead of calling the
    // body invalid JSON. Where a schema admits any key (the rule language's objects), the rules
    // validator refuses these names itself.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
  });

  // JSON only: without the text/plain parser, any other body type is a 415.
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((err, request, reply) => {
    const { status, body } = toErrorReply(err, deps.maxBodyBytes);
    if (status >= 500) request.log.error({ err, url: request.routeOptions.url }, 'request failed');
    else request.log.debug({ status, error: body.error, url: request.routeOptions.url }, 'request rejected');
    if (body.error === 'unauthorized') reply.header('www-authenticate', 'Bearer realm="state-relay-scanner"');
    return reply.status(status).send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send({ error: 'route_not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` }),
  );

  app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'state-relay scanner',
        version: '0.1.0',
        description: 'Sweeps a read-only replica of the processor’s state and relays conditional update commands.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    },
  });
  app.register(scannerServices, deps);
  app.register(healthRoutes);
  app.register(scanRoutes, { apiToken: deps.apiToken });
  if (deps.schedules) app.register(scheduleRoutes, { apiToken: deps.apiToken, schedules: deps.schedules });
  app.register(statusPageRoutes);
  app.register(statusRoutes, { apiToken: deps.apiToken, commandLag: deps.commandLag });
  return app;
}
