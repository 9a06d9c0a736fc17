import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

// The PromQL of deploy/ (the Grafana dashboard's panels and variables, the alert rules) and the
// metric names it reads, so tests can check that a running service exports every one of them.

export const DEPLOY = resolve(__dirname, '../../deploy');

/** One PromQL expression and where it comes from ("panel Consumer lag, A", "alert StateRelayDeadLetters"). */
export interface Query {
  where: string;
  expr: string;
}

interface Dashboard {
  panels: Array<{ title: string; type: string; targets?: Array<{ refId: string; expr: string }> }>;
  templating: { list: Array<{ name: string; type: string; query?: unknown; definition?: string }> };
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(join(DEPLOY, 'grafana/state-relay.json'), 'utf8')) as Dashboard;
}

export function readAlertRules(): AlertRule[] {
  const file = parse(readFileSync(join(DEPLOY, 'prometheus/alerts.yml'), 'utf8')) as {
    groups: Array<{ rules: AlertRule[] }>;
  };
  return file.groups.flatMap((g) => g.rules);
}

/** Every panel target's expression and every query variable's (Grafana's `label_values(metric, label)` as `metric`). */
export function dashboardQueries(dashboard = readDashboard()): Query[] {
  const queries: Query[] = [];
  for (const panel of dashboard.panels)
    for (const target of panel.targets ?? [])
      queries.push({ where: `panel ${panel.title}, ${target.refId}`, expr: target.expr });
  for (const variable of dashboard.templating.list) {
    if (variable.type !== 'query') continue;
    const definition = variable.definition ?? '';
    const labelValues = /^label_values\(\s*(.+?)\s*,\s*\w+\s*\)$/.exec(definition);
    queries.push({ where: `variable ${variable.name}`, expr: labelValues ? labelValues[1]! : definition });
  }
  return queries;
}

export function alertQueries(rules = readAlertRules()): Query[] {
  return rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr }));
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects, as written (`x_bucket` stays `x_bucket`). Grafana
 * variables may appear only inside strings, matchers and ranges (`[$__rate_interval]`); a
 * selector by `__name__` is refused, since no name could be checked.
 */
export function metricNames(expr: string): string[] {
  if (expr.includes('__name__')) throw new Error(`selects by __name__, which cannot be checked: ${expr}`);
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // string literals
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // label lists
  if (bare.includes('$')) throw new Error(`a Grafana variable outside a matcher or range: ${expr}`);
  const names = new Set<string>();
  for (const m of bare.matchAll(/(?<![\w.:])[A-Za-z_:][\w:]*/g)) {
    const rest = bare.slice(m.index + m[0].length);
    if (/^\s*\(/.test(rest)) continue; // a function or aggregation
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** A Prometheus text exposition: each family's type, and the names its samples carry. */
export interface Exposition {
  types: Map<string, string>;
  samples: Set<string>;
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    else if (line && !line.startsWith('#')) samples.add(/^[^{\s]+/.exec(line)![0]);
  }
  return { types, samples };
}

const SERIES_SUFFIXES: Record<string, string[]> = {
  _bucket: ['histogram'],
  _count: ['histogram', 'summary'],
  _sum: ['histogram', 'summary'],
};

/** Series Prometheus writes itself for each scrape target, which no service exports. */
export const SCRAPE_SERIES: ReadonlySet<string> = new Set(['up']);

/**
 * Why `name`, as a query selects it, is not exported by any of `expositions` (nor written by
 * Prometheus: SCRAPE_SERIES): no family of that
 * name (or, for `x_bucket`, `x_count`, `x_sum`, no histogram `x`), or a family without one sample
 * of that name. Undefined when one exports it with samples.
 */
export function notExported(name: string, expositions: Exposition[]): string | undefined {
  if (SCRAPE_SERIES.has(name)) return undefined;
  const families = expositions.filter((e) => {
    if (e.types.has(name)) return true;
    const suffix = Object.keys(SERIES_SUFFIXES).find((s) => name.endsWith(s));
    if (!suffix) return false;
    const type = e.types.get(name.slice(0, -suffix.length));
    return type !== undefined && SERIES_SUFFIXES[suffix]!.includes(type);
  });
  if (families.length === 0) return `${name} is not exported`;
  if (!families.some((e) => e.samples.has(name))) return `${name} is declared (HELP/TYPE) but has no sample`;
  return undefined;
}
