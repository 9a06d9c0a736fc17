import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ErrorBodySchema, requireBearer } from '@state-relay/service-kit';
import type { FastifyInstance } from 'fastify';
import type { StateReadAuth } from '../config';
import { ProcessorStatusSchema, type ProcessorStatus } from '../status/schema';

/**
 * `GET /status`: what the scanner's status page shows of this instance (tasks, restores, recent
 * commit latency, counts, input lag). Behind the same bearer token as `/state/:key`: the scanner
 * reads it with its token and serves it to the page from its own origin.
 */
export function statusRoutes(
  app: FastifyInstance,
  status: () => Promise<ProcessorStatus>,
  stateAuth: StateReadAuth,
): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/status',
    {
      onRequest: stateAuth.kind === 'bearer' ? [requireBearer(stateAuth.token)] : [],
      schema: {
        tags: ['status'],
        description:
          'This instance for the scanner’s status page: tasks and their states, restores (records to go), ' +
          'event commit latency p50/p99 over the last 10 s, commands and events committed, dead letters, ' +
          'the lag of each input partition it owns',
        ...(stateAuth.kind === 'bearer' ? { security: [{ bearerAuth: [] }] } : {}),
        response: { 200: ProcessorStatusSchema, 401: ErrorBodySchema },
      },
    },
    async () => status(),
  );
}
