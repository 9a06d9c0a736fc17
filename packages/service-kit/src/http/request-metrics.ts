import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Histogram, Registry } from 'prom-client';
import { LATENCY_BUCKETS, type MetricFactory } from '../metrics';

export const HTTP_REQUEST_LABELS = ['method', 'route', 'status_code'] as const;
export type HttpRequestLabel = (typeof HTTP_REQUEST_LABELS)[number];
export type HttpRequestDuration = Histogram<HttpRequestLabel>;

/** The `route` of a request no route matched: one value, whatever the URL, so ids cannot multiply series. */
export const UNMATCHED_ROUTE = 'unmatched';

/** What a service's HTTP base needs of its metrics: the registry `/metrics` serves, and the request histogram. */
export interface ServiceHttpMetrics {
  registry: Registry;
  httpRequestDuration: HttpRequestDuration;
}

/**
 * `<service>_http_request_duration_seconds{method,route,status_code}`: each answered request, from
 * routing to the response sent, labelled by the route's pattern (`/scans/:id`), never the URL.
 */
export function httpRequestDuration(metrics: MetricFactory, service: string): HttpRequestDuration {
  return metrics.histogram(
    `${service}_http_request_duration_seconds`,
    `HTTP requests answered, by method, route pattern ("${UNMATCHED_ROUTE}" when no route matched) and status code: seconds from routing to the response sent`,
    LATENCY_BUCKETS,
    HTTP_REQUEST_LABELS,
  );
}

export function requestLabels(request: FastifyRequest, reply: FastifyReply): Record<HttpRequestLabel, string> {
  const route = request.is404 ? undefined : request.routeOptions.url;
  return { method: request.method, route: route ?? UNMATCHED_ROUTE, status_code: String(reply.statusCode) };
}

/** Observes every response of the instance it is registered on (and of the plugins registered after it). */
export const requestMetrics = fp(
  async (app: FastifyInstance, { duration }: { duration: HttpRequestDuration }) => {
    app.addHook('onResponse', async (request, reply) => {
      duration.observe(requestLabels(request, reply), reply.elapsedTime / 1000);
    });
  },
  { name: 'request-metrics', fastify: '5.x' },
);
