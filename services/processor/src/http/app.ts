import { Type } from '@sinclair/typebox';
import { createServiceApp } from '@state-relay/service-kit';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { StateReadAuth } from '../config';
import { ERRORS } from '../errors';
import type { ProcessorMetrics } from '../metrics';
import type { Processor } from '../processor';
import { stateRoutes } from './state-routes';
import { statusRoutes } from './status-routes';

export interface AppDeps {
  /** Without `status` (tests of the other routes) there is no GET /status. */
  processor: Pick<Processor, 'isReady' | 'tasks'> & Partial<Pick<Processor, 'status'>>;
  metrics: ProcessorMetrics;
  logger: Logger;
  /** Who may read `/state/:key`; no default, so every embedder decides. */
  stateAuth: StateReadAuth;
}

/** No route takes a body; anything larger is refused before a handler runs. */
const BODY_LIMIT = 1024;

const Readiness = Type.Object({
  ready: Type.Boolean(),
  tasks: Type.Array(Type.Integer(), { description: 'The tasks (partitions) assigned to this instance' }),
});

/**
 * The processor's HTTP surface: health, readiness (false while restoring), Prometheus
 * metrics and the OpenAPI document (all open, as probes and scrapers expect), a read-only
 * view of one entity and the status the scanner's page shows, behind a bearer token. Built without listening, so tests drive it.
 */
export function buildApp({ processor, metrics, logger, stateAuth }: AppDeps): FastifyInstance {
  const app = createServiceApp({
    service: 'processor',
    description: 'The exactly-once owner of the state: a read-only view of the entities this instance holds.',
    logger,
    bodyLimit: BODY_LIMIT,
    errors: ERRORS,
    metrics,
    readiness: {
      description: '200 when the group is joined and every assigned task is RUNNING; 503 otherwise',
      schema: Readiness,
      report: () => ({ ready: processor.isReady, tasks: processor.tasks.owned }),
    },
  });

  // A plugin, as the kit asks: loaded after the kit's OpenAPI hook, so the document lists it.
  app.register(async (routes) => {
    stateRoutes(routes, processor, stateAuth);
    const status = processor.status?.bind(processor);
    if (status) statusRoutes(routes, status, stateAuth);
  });
  return app;
}
