import { Type } from '@sinclair/typebox';
import fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ProcessorMetrics } from './metrics';
import type { Processor } from './processor';

export interface AppDeps {
  processor: Pick<Processor, 'isReady' | 'tasks'>;
  metrics: ProcessorMetrics;
  logger: Logger;
}

/**
 * The processor's HTTP surface: health, readiness (false while restoring), Prometheus
 * metrics and a read-only view of one entity. Built without listening, so tests `inject`.
 */
export function buildApp({ processor, metrics, logger }: AppDeps): FastifyInstance {
  const app = fastify({ loggerInstance: logger as FastifyBaseLogger, bodyLimit: 1024 });
  // Probes and scrapes arrive every few seconds: per-request logs (info) would drown the rest.
  app.addHook('onRoute', (route) => {
    route.logLevel ??= 'warn';
  });

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err }, 'request failed');
      return reply.status(500).send({ error: 'internal_error', message: 'internal error' });
    }
    return reply.status(status).send({ error: err.code ?? 'bad_request', message: err.message });
  });

  app.get('/healthz', { schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({
    status: 'ok' as const,
  }));

  app.get(
    '/readyz',
    {
      schema: {
        response: {
          200: Type.Object({ ready: Type.Boolean(), tasks: Type.Array(Type.Integer()) }),
          503: Type.Object({ ready: Type.Boolean(), tasks: Type.Array(Type.Integer()) }),
        },
      },
    },
    async (_req, reply) => {
      const body = { ready: processor.isReady, tasks: processor.tasks.owned };
      return reply.status(body.ready ? 200 : 503).send(body);
    },
  );

  app.get('/metrics', async (_req, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });

  app.get(
    '/state/:key',
    {
      schema: {
        params: Type.Object({ key: Type.String({ minLength: 1, maxLength: 512 }) }),
      },
    },
    async (request, reply) => {
      const { key } = request.params as { key: string };
      const found = await processor.tasks.read(key);
      if (!found) {
        return reply.status(404).send({
          error: 'not_found',
          message: `no entity "${key}" in the tasks this instance owns`,
          ownedTasks: processor.tasks.owned,
        });
      }
      return { key, task: found.task, version: found.entity.version, value: found.entity.value };
    },
  );
  return app;
}
