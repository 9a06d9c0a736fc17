import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireBearer } from '@state-relay/service-kit';
import { IdempotencyHeaders, IDEMPOTENCY_HEADER, type IdempotencyKeys } from '../idempotency';
import { CreatedScan, CreateScanBody, ErrorBody, ListQuery, ScanList, ScanParams, ScanViewSchema } from '../schemas';

const security = [{ bearerAuth: [] }];
const errors = { 400: ErrorBody, 401: ErrorBody, 500: ErrorBody };

/** The scan API; every route needs the bearer token. */
export async function scanRoutes(
  app: FastifyInstance,
  opts: { apiToken: string; idempotency?: IdempotencyKeys | undefined },
): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', requireBearer(opts.apiToken));

  api.post(
    '/scans',
    {
      schema: {
        tags: ['scans'],
        security,
        description:
          'Queue a scan. Scans run one at a time in creation order; the others wait as pending. ' +
          'asOf is resolved once, here, and carried in every command. With an Idempotency-Key, a retry ' +
          '(same key, same body) answers with the scan the first request queued (Idempotent-Replayed: true).',
        headers: IdempotencyHeaders,
        body: CreateScanBody,
        response: { 202: CreatedScan, ...errors, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const key = request.headers[IDEMPOTENCY_HEADER];
      const create = () => app.scans.create(request.body).id;
      const { id, replayed } = opts.idempotency
        ? opts.idempotency.run('POST /scans', key, request.body, create)
        : { id: create(), replayed: false };
      const scan = app.scans.get(id);
      if (replayed) reply.header('idempotent-replayed', 'true');
      return reply.status(202).header('location', scan.url).send({ scan, url: scan.url });
    },
  );

  api.get(
    '/scans',
    {
      schema: {
        tags: ['scans'],
        security,
        description: 'Scans, newest first',
        querystring: ListQuery,
        response: { 200: ScanList, ...errors },
      },
      preValidation: async (request: FastifyRequest) =>
        coerceIntegers(request.query as Record<string, unknown>, ['limit', 'offset']),
    },
    async (request) => {
      const { limit = 20, offset = 0 } = request.query;
      return { ...app.scans.list(limit, offset), limit, offset };
    },
  );

  api.get(
    '/scans/:id',
    {
      schema: {
        tags: ['scans'],
        security,
        params: ScanParams,
        response: { 200: ScanViewSchema, ...errors, 404: ErrorBody },
      },
    },
    async (request) => app.scans.get(request.params.id),
  );

  api.post(
    '/scans/:id/cancel',
    {
      schema: {
        tags: ['scans'],
        security,
        description:
          'Cancel: a pending scan at once, a running one at its next chunk boundary. 409 if it already finished.',
        params: ScanParams,
        response: { 200: ScanViewSchema, ...errors, 404: ErrorBody, 409: ErrorBody },
      },
    },
    async (request) => app.scans.cancel(request.params.id),
  );
}

/**
 * Query strings are text; the API validates without coercion (so a body's "5" is not a number),
 * and converts exactly the integer query parameters here, before validation.
 */
function coerceIntegers(query: Record<string, unknown>, names: string[]): void {
  for (const name of names) {
    const v = query[name];
    if (typeof v === 'string' && /^(0|[1-9][0-9]{0,14})$/.test(v)) query[name] = Number(v);
  }
}
