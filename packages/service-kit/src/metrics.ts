import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * A service's Prometheus registry with Node's default metrics under their standard names
 * (`process_cpu_user_seconds_total`, `nodejs_heap_size_used_bytes`, …), labelled with the
 * service, so stock Node.js dashboards work; the service registers its own metrics on it.
 */
export function createServiceRegistry(service: string): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, labels: { service } });
  return registry;
}
