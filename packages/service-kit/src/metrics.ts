import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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

/** A service's own metrics, each declared in one call and registered on the service's registry. */
export interface MetricFactory {
  counter<L extends string = string>(name: string, help: string, labelNames?: readonly L[]): Counter<L>;
  gauge<L extends string = string>(
    name: string,
    help: string,
    labelNames?: readonly L[],
    collect?: (this: Gauge<L>) => void | Promise<void>,
  ): Gauge<L>;
  histogram<L extends string = string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames?: readonly L[],
  ): Histogram<L>;
}

export function metricFactory(registry: Registry): MetricFactory {
  const registers = [registry];
  const labels = <L extends string>(labelNames?: readonly L[]) => (labelNames ? { labelNames } : {});
  return {
    counter: (name, help, labelNames) => new Counter({ name, help, ...labels(labelNames), registers }),
    gauge: (name, help, labelNames, collect) =>
      new Gauge({ name, help, ...labels(labelNames), ...(collect ? { collect } : {}), registers }),
    histogram: (name, help, buckets, labelNames) =>
      new Histogram({ name, help, buckets, ...labels(labelNames), registers }),
  };
}
