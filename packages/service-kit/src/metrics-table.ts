import type { Registry } from 'prom-client';
import { createServiceRegistry } from './metrics';

/** One documented metric: its name, type and label names as the README writes them. */
export interface DocumentedMetric {
  name: string;
  type: string;
  labels: string[];
}

/**
 * The metrics of the first markdown table whose first column is "metric": the name in
 * backticks, the type (counter, gauge, histogram), the label names in backticks (none: no
 * backticks, e.g. "—"), then the meaning.
 */
export function readMetricsTable(markdown: string): DocumentedMetric[] {
  const lines = markdown.split('\n');
  const header = lines.findIndex((line) => /^\|\s*metric\s*\|/.test(line));
  if (header < 0) return [];
  const documented: DocumentedMetric[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [name = '', type = '', labels = ''] = line
      .split('|')
      .slice(1)
      .map((cell) => cell.trim());
    documented.push({ name: backticked(name)[0] ?? name, type, labels: backticked(labels) });
  }
  return documented;
}

/**
 * Where a README's metrics table and a service's registry disagree: a metric only one of them
 * has, another type, other labels. Node's default metrics (every service registry has them) are
 * left out of the comparison. Empty when they agree.
 */
export function metricsTableDrift(registry: Registry, markdown: string): string[] {
  const documented = readMetricsTable(markdown);
  if (documented.length === 0) return ['the README has no table whose first column is "metric"'];
  const defaults = new Set(
    createServiceRegistry('defaults')
      .getMetricsAsArray()
      .map((m) => m.name),
  );
  const exported = new Map(
    registry
      .getMetricsAsArray()
      .filter((m) => !defaults.has(m.name))
      .map((m) => [m.name, m]),
  );
  const drift: string[] = [];
  for (const doc of documented) {
    const metric = exported.get(doc.name);
    if (metric === undefined) {
      drift.push(`${doc.name} is documented but not exported`);
      continue;
    }
    // prom-client types `type` as a numeric enum; at run time it is the exposition name.
    const type = String(metric.type);
    if (type !== doc.type) drift.push(`${doc.name}: the README says ${doc.type}, the registry ${type}`);
    // Every metric prom-client creates carries its label names; its types leave them out.
    const labels = [...((metric as { labelNames?: readonly string[] }).labelNames ?? [])];
    if (labels.join(',') !== doc.labels.join(','))
      drift.push(
        `${doc.name}: the README's labels are {${doc.labels.join(',')}}, the registry's {${labels.join(',')}}`,
      );
  }
  for (const name of exported.keys())
    if (!documented.some((d) => d.name === name)) drift.push(`${name} is exported but not documented`);
  return drift;
}

function backticked(cell: string): string[] {
  return [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
}
