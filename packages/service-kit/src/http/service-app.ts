import swagger from '@fastify/swagger';
import { Type, type Static, type TObject } from '@sinclair/typebox';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { ErrorTable } from '../errors';
import { toErrorReply } from './error-reply';
import { requestLabels, requestMetrics, type ServiceHttpMetrics } from './request-metrics';
import { forDocumentation } from './schema-helpers';
import { clientErrorHandler, HTTP_SERVER_LIMITS, serverOptions, type HttpServerLimits } from './server-limits';

/** The body of every error answer, for the routes' response schemas. */
export const ErrorBodySchema = Type.Object({
  error: Type.String({ description: 'A code from the error table in the README' }),
  message: Type.String(),
  issues: Type.Optional(
    Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
      description: 'The offending fields, the first 20 of them',
    }),
  ),
  issuesOmitted: Type.Optional(Type.Integer({ description: 'How many more issues there were than listed' })),
});

/** `GET /readyz`: 200 with the report when it says ready, 503 with it otherwise. */
export interface Readiness<T extends TObject = TObject> {
  description: string;
  /** The report's schema, at both statuses. */
  schema: T;
  report(): Static<T> & { ready: boolean };
}

export interface ServiceHttpOptions {
  /** `processor`, `scanner`: the OpenAPI title and the bearer realm say it. */
  service: string;
  /** The OpenAPI document's description of the API. */
  description: string;
  /** The service's error table: HTTP_ERRORS and its own codes. */
  errors: ErrorTable;
  /** The registry served at `GET /metrics`, and the histogram every answered request is observed in. */
  metrics: ServiceHttpMetrics;
  readiness: Readiness;
  /** Shown in the error that answers a larger body. */
  bodyLimit: number;
}

export interface ServiceAppOptions extends ServiceHttpOptions {
  logger: Logger;
  /** The longest path parameter the router matches; longer ones find no route. */
  maxParamLength?: number;
  /** Timeouts and the header size bound of the server `listen` creates; HTTP_SERVER_LIMITS by default. */
  limits?: Partial<HttpServerLimits>;
}

/**
 * A service's fastify instance, built without listening so tests drive it: the strict validation
 * and body handling both services share, and `serviceHttp` registered. The service registers its
 * own routes on it as plugins (`app.register`): a route declared on the instance itself is added
 * before the OpenAPI hook exists and is missing from the document.
 */
export function createServiceApp(options: ServiceAppOptions): FastifyInstance {
  const app = fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    // Request lines would log every probe, scrape and poll; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit,
    // A slow or stalled client cannot hold a socket: fastify leaves these unbounded.
    ...serverOptions({ ...HTTP_SERVER_LIMITS, ...options.limits }),
    clientErrorHandler: clientErrorHandler(options.errors),
    routerOptions: { maxParamLength: options.maxParamLength ?? 2048 },
    // Errors the router raises before any route runs (a malformed %-escape) in the API's shape.
    frameworkErrors: (err, request, reply) => {
      const { status, body } = toErrorReply(err, options.errors, options.bodyLimit);
      request.log.debug({ status, error: body.error }, 'request rejected by the router');
      // The reply is not yet bound to a route here, so its typed status codes do not apply.
      const untyped = reply as unknown as { code(n: number): { send(b: unknown): void } };
      untyped.code(status).send(body);
      // No onResponse hook runs for these; the router refused them at once (no start time to measure from).
      options.metrics.httpRequestDuration.observe(requestLabels(request, reply), 0);
    },
    // No type coercion and no silent removal of unknown properties: a wrong type or an unknown
    // field gets a 400 that names it.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false } },
    // A `__proto__` or `constructor` key is valid JSON: parse it as an own property (JSON.parse never
    // sets a prototype) and let the schema name it like any unknown property, instead of calling the
    // body invalid JSON. Where a schema admits any key, the validator behind it refuses these names.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
  });
  app.register(serviceHttp, options);
  return app;
}

/**
 * What every service's HTTP edge has: the error contract ({error, message, issues?} with the
 * status from the error table, JSON bodies only, 404 `route_not_found`), the open routes
 * `/healthz`, `/readyz`, `/metrics` and `/openapi.json`, the OpenAPI document of all routes, and
 * every answered request observed by route pattern and status.
 */
export const serviceHttp = fp(
  async (app: FastifyInstance, options: ServiceHttpOptions) => {
    const { errors, bodyLimit, readiness, metrics } = options;
    await app.register(requestMetrics, { duration: metrics.httpRequestDuration });
    // JSON only: without the text/plain parser, any other body type is a 415.
    app.removeContentTypeParser('text/plain');

    app.setErrorHandler((err, request, reply) => {
      const { status, body } = toErrorReply(err, errors, bodyLimit);
      if (status >= 500) request.log.error({ err, url: request.routeOptions.url }, 'request failed');
      else request.log.debug({ status, error: body.error, url: request.routeOptions.url }, 'request rejected');
      if (body.error === 'unauthorized')
        reply.header('www-authenticate', `Bearer realm="state-relay-${options.service}"`);
      return reply.status(status).send(body);
    });
    app.setNotFoundHandler((request, reply) =>
      reply
        .status(404)
        .send({ error: 'route_not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` }),
    );

    // Awaited, so its route hook sees every route declared after it, these below included.
    await app.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: { title: `state-relay ${options.service}`, version: '0.1.0', description: options.description },
        components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      },
      // What the routes validate loosely but document in full (documentedAs) is shown in full.
      transform: ({ schema, url }) => ({ schema: forDocumentation(schema) as typeof schema, url }),
      // A schema with an $id (TypeBox's recursive ones: Condition, JsonValue) is a component of that name.
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    });

    app.get('/healthz', { schema: { tags: ['health'], response: { 200: Health } } }, async () => ({
      status: 'ok' as const,
    }));

    app.get(
      '/readyz',
      {
        schema: {
          tags: ['health'],
          description: readiness.description,
          response: { 200: readiness.schema, 503: readiness.schema },
        },
      },
      async (_request, reply) => {
        const body = readiness.report();
        return reply.status(body.ready ? 200 : 503).send(body);
      },
    );

    app.get(
      '/metrics',
      { schema: { tags: ['health'], description: 'Prometheus text format', response: { 200: Type.String() } } },
      async (_request, reply) => {
        reply.header('content-type', metrics.registry.contentType);
        return metrics.registry.metrics();
      },
    );

    app.get(
      '/openapi.json',
      {
        schema: {
          tags: ['health'],
          description: 'This API as an OpenAPI 3 document',
          response: { 200: Type.Object({}, { additionalProperties: true }) },
        },
      },
      async () => app.swagger(),
    );
  },
  { name: 'service-http', fastify: '5.x' },
);

const Health = Type.Object({ status: Type.Literal('ok') });
