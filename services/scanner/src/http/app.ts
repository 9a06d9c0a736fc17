import { createServiceApp, type ServiceHttpMetrics } from '@state-relay/service-kit';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import { ERRORS } from '../errors';
import { scannerReadiness } from './routes/health';
import type { IdempotencyKeys } from './idempotency';
import { scanRoutes } from './routes/scans';
import { scheduleRoutes } from './routes/schedules';
import { statusPageRoutes } from './routes/status-page';
import { statusRoutes, type CommandLagSource } from './routes/status';
import type { ReplicaHealth, ScanService } from '../scans/scan-service';
import type { ScheduleService } from '../schedules/schedule-service';
import type { ProcessorSampler } from '../processors/processor-sampler';

export interface AppDeps {
  scans: ScanService;
  replica: ReplicaHealth;
  metrics: ServiceHttpMetrics;
  logger: Logger;
  apiToken: string;
  maxBodyBytes: number;
  /** The /schedules API; without it (tests and benchmarks of scans alone) the routes are absent. */
  schedules?: ScheduleService;
  /** Idempotency-Key on the creating routes; without it (tests of the routes alone) the header is validated and ignored. */
  idempotency?: IdempotencyKeys;
  /** The processor's lag on the commands topic, for GET /status; without it the lag is null. */
  commandLag?: CommandLagSource;
  /** The processor instances GET /status reads (PROCESSOR_URLS); without it the page shows none. */
  processors?: { urls: readonly string[]; token: string };
  /** The scanner's own readings of them (it paces walks by them); without it the route reads `processors` itself. */
  processorSampler?: ProcessorSampler;
}

declare module 'fastify' {
  interface FastifyInstance {
    scans: ScanService;
    replica: ReplicaHealth;
  }
}

/** The scanner's collaborators as decorations, so route plugins reach them typed. */
export const scannerServices = fp(
  async (app: FastifyInstance, deps: Pick<AppDeps, 'scans' | 'replica'>) => {
    app.decorate('scans', deps.scans);
    app.decorate('replica', deps.replica);
  },
  { name: 'scanner-services', fastify: '5.x' },
);

/**
 * The scanner's HTTP surface, built without listening so tests drive it. The service kit gives
 * the strict validation, the error contract (ERRORS), `/healthz`, `/readyz`, `/metrics` and the
 * OpenAPI document at `/openapi.json`; the scan, schedule and status routes are the scanner's.
 */
export function buildApp(deps: AppDeps): FastifyInstance {
  const app = createServiceApp({
    service: 'scanner',
    description: 'Sweeps a read-only replica of the processor’s state and relays conditional update commands.',
    logger: deps.logger,
    bodyLimit: deps.maxBodyBytes,
    // Above every schema's own limit, so an over-long id gets the schema's 400 naming the field.
    maxParamLength: 2048,
    errors: ERRORS,
    metrics: deps.metrics,
    readiness: scannerReadiness(deps.replica),
  });
  app.register(scannerServices, deps);
  app.register(scanRoutes, { apiToken: deps.apiToken, idempotency: deps.idempotency });
  if (deps.schedules)
    app.register(scheduleRoutes, { apiToken: deps.apiToken, schedules: deps.schedules, idempotency: deps.idempotency });
  app.register(statusPageRoutes);
  app.register(statusRoutes, {
    apiToken: deps.apiToken,
    commandLag: deps.commandLag,
    processors: deps.processors,
    sampler: deps.processorSampler,
  });
  return app;
}
