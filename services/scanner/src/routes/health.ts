import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { Health, Readiness } from '../schemas';

/** Open routes: liveness, readiness (the replica caught up once), Prometheus metrics, the OpenAPI document. */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', { schema: { tags: ['health'], response: { 200: Health } } }, async () => ({
    status: 'ok' as const,
  }));

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        description: '200 once the replica has caught up with the changelog since start; 503 before',
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (_request, reply) => {
      const partitions = app.replica.lag();
      const body = {
        ready: app.replica.ready,
        replicaLag: { total: partitions.reduce((s, p) => s + p.lag, 0), partitions },
      };
      return reply.status(body.ready ? 200 : 503).send(body);
    },
  );

  app.get(
    '/metrics',
    { schema: { tags: ['health'], description: 'Prometheus text format', response: { 200: Type.String() } } },
    async (_request, reply) => {
      reply.header('content-type', app.metricsRegistry.contentType);
      return app.metricsRegistry.metrics();
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
}
