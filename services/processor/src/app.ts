import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import type { StateReadAuth } from './config';
import type { ProcessorMetrics } from './metrics';
import type { Processor } from './processor';

export interface AppDeps {
  processor: Pick<Processor, 'isReady' | 'tasks'>;
  metrics: ProcessorMetrics;
  logger: Logger;
  /** Who may read `/state/:key`; no default, so every embedder decides. */
  stateAuth: StateReadAuth;
}

/**
 * The processor's HTTP surface: health, readiness (false while restoring), Prometheus
 * metrics (all open, as probes and scrapers expect) and a read-only view of one entity,
 * behind a bearer token. Built without listening, so tests `inject`.
 */
export function buildApp({ processor, metrics, logger, stateAuth }: AppDeps): FastifyInstance {
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
      onRequest: stateAuth.kind === 'bearer' ? [requireBearer(stateAuth.token)] : [],
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

/** Constant-time: both sides are hashed first, so the comparison takes the same time whatever they are. */
function tokensMatch(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** An onRequest hook (before anything is parsed) answering 401 in the API's shape; never echoes a token. */
function requireBearer(expected: string) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const presented = /^Bearer[ \t]+([^\s].*?)[ \t]*$/i.exec(request.headers.authorization ?? '')?.[1];
    if (presented !== undefined && tokensMatch(presented, expected)) return undefined;
    // Answering from an async hook: send, then return the reply so fastify stops here.
    return reply
      .status(401)
      .header('www-authenticate', 'Bearer realm="state-relay-processor"')
      .send({
        error: 'unauthorized',
        message:
          presented === undefined
            ? 'a bearer token is required: Authorization: Bearer <token>'
            : 'the bearer token is not valid',
      });
  };
}
