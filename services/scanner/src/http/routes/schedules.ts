import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { requireBearer } from '@state-relay/service-kit';
import {
  CreateScheduleBody,
  PatchScheduleBody,
  ScheduleList,
  ScheduleParams,
  ScheduleViewSchema,
} from '../schedule-schemas';
import type { ScheduleService } from '../../schedules/schedule-service';
import { IdempotencyHeaders, IDEMPOTENCY_HEADER, type IdempotencyKeys } from '../idempotency';
import { ErrorBody, guardedErrors } from '../schemas';

const security = [{ bearerAuth: [] }];
const notFound = { 404: ErrorBody };

/** The schedule API; every route needs the bearer token, as /scans does. */
export async function scheduleRoutes(
  app: FastifyInstance,
  opts: { apiToken: string; schedules: ScheduleService; idempotency?: IdempotencyKeys | undefined },
): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { schedules } = opts;
  app.addHook('onRequest', requireBearer(opts.apiToken));

  api.post(
    '/schedules',
    {
      schema: {
        tags: ['schedules'],
        security,
        description:
          'Create a schedule: each run creates an ordinary scan from the template, asOf = the run time. With an ' +
          'Idempotency-Key, a retry (same key, same body) answers with the schedule the first request created.',
        headers: IdempotencyHeaders,
        body: CreateScheduleBody,
        response: { 201: ScheduleViewSchema, ...guardedErrors, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody },
      },
    },
    async (request, reply) => {
      const key = request.headers[IDEMPOTENCY_HEADER];
      const create = () => schedules.create(request.body).id;
      const { id, replayed } = opts.idempotency
        ? opts.idempotency.run('POST /schedules', key, request.body, create)
        : { id: create(), replayed: false };
      const schedule = schedules.get(id); // schedule_not_found when it was deleted since the first answer
      if (replayed) reply.header('idempotent-replayed', 'true');
      return reply.status(201).header('location', schedule.url).send(schedule);
    },
  );

  api.get(
    '/schedules',
    { schema: { tags: ['schedules'], security, response: { 200: ScheduleList, ...guardedErrors } } },
    async () => ({ schedules: schedules.list() }),
  );

  api.get(
    '/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        security,
        params: ScheduleParams,
        response: { 200: ScheduleViewSchema, ...guardedErrors, ...notFound },
      },
    },
    async (request) => schedules.get(request.params.id),
  );

  api.patch(
    '/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        security,
        description: 'Pause or resume, rename',
        params: ScheduleParams,
        body: PatchScheduleBody,
        response: { 200: ScheduleViewSchema, ...guardedErrors, ...notFound, 413: ErrorBody, 415: ErrorBody },
      },
    },
    async (request) => schedules.update(request.params.id, request.body),
  );

  api.delete(
    '/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        security,
        description: 'Delete the schedule and its run links; its scans stay (a running one is not cancelled)',
        params: ScheduleParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...guardedErrors, ...notFound },
      },
    },
    async (request, reply) => {
      schedules.delete(request.params.id);
      return reply.status(204).send();
    },
  );
}
