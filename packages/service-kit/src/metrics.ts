import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type LabelValues } from 'prom-client';

/**
 * The buckets (seconds) of every latency histogram of both services (event commit latency, commit
 * duration, HTTP requests): they resolve 10 ms to 10 s, so histogram_quantile gives a p50 or p99
 * within a bucket's width across that range; 5 ms keeps the fast commits and requests apart.
 */
export const LATENCY_BUCKETS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10,
]);

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
  /**
   * `initial`: label sets exported at 0 before their first increment, so the series exists from
   * the start: `increase()` then counts the first increment, and dashboards show a 0, not nothing.
   */
  counter<L extends string = string>(
    name: string,
    help: string,
    labelNames?: readonly L[],
    initial?: readonly LabelValues<L>[],
  ): Counter<L>;
  gauge<L extends string = string>(
    name: string,
    help: string,
    labelNames?: readonly L[],
    collect?: (this: Gauge<L>) => void | Promise<void>,
  ): Gauge<L>;
  histogram<L extends string = string>(
    name: string,
    help: string,
    buckets: readonly number[],
    labelNames?: readonly L[],
  ): Histogram<L>;
}

export function metricFactory(registry: Registry): MetricFactory {
  const registers = [registry];
  const labels = <L extends string>(labelNames?: readonly L[]) => (labelNames ? { labelNames } : {});
  return {
    counter: (name, help, labelNames, initial = []) => {
      const counter = new Counter({ name, help, ...labels(labelNames), registers });
      for (const set of initial) counter.inc(set, 0);
      return counter;
    },
    gauge: (name, help, labelNames, collect) =>
      new Gauge({ name, help, ...labels(labelNames), ...(collect ? { collect } : {}), registers }),
    histogram: (name, help, buckets, labelNames) =>
      new Histogram({ name, help, buckets: [...buckets], ...labels(labelNames), registers }),
  };
}
