import { createProcessorMetrics } from '../../services/processor/src/metrics';
import { createScannerMetrics } from '../../services/scanner/src/metrics';
import {
  alertQueries,
  dashboardQueries,
  metricNames,
  notExported,
  parseExposition,
  readAlertRules,
  readDashboard,
} from '../deploy/queries';

// deploy/: the Grafana dashboard and the Prometheus alert rules. promtool checks the rules' syntax
// and their unit tests (scripts/test.sh); test/deploy/metrics.itest.ts checks their metric names
// against running services. These check what neither does, without a broker.

describe('reading metric names out of PromQL', () => {
  it('finds the selected names and skips functions, keywords, labels, strings and ranges', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (job, le) (rate(a_seconds_bucket{route!="/x", le=~"1|2"}[$__rate_interval]))) > 2',
      ),
    ).toEqual(['a_seconds_bucket']);
    expect(
      metricNames('sum by (topic) (b_records) > 1000 and on (topic) deriv(b_records[10m] offset 5m) > 0 or c_total'),
    ).toEqual(['b_records', 'c_total']);
    expect(metricNames('60 * sum without (instance) (rate(d_total{code="NOT_JSON"}[1m:30s])) > bool 1e3')).toEqual([
      'd_total',
    ]);
    expect(metricNames('e_total / ignoring (code) group_left (x) f_total')).toEqual(['e_total', 'f_total']);
  });

  it('refuses what it cannot check: a selector by __name__, a variable outside a matcher or range', () => {
    expect(() => metricNames('rate({__name__=~"a_.*"}[5m])')).toThrow(/__name__/);
    expect(() => metricNames('topk($n, a_total)')).toThrow(/Grafana variable/);
  });

  it('strips _bucket, _count and _sum only from a histogram (or a summary) of that name', () => {
    const exposition = parseExposition(
      [
        '# HELP h_seconds h',
        '# TYPE h_seconds histogram',
        'h_seconds_bucket{le="+Inf"} 1',
        'h_seconds_sum 0.5',
        'h_seconds_count 1',
        '# HELP g_count a gauge that ends in _count',
        '# TYPE g_count gauge',
        'g_count 3',
        '# HELP c_total declared, never incremented',
        '# TYPE c_total counter',
        '# HELP x a gauge',
        '# TYPE x gauge',
        'x 1',
      ].join('\n'),
    );
    expect(
      ['h_seconds_bucket', 'h_seconds_sum', 'h_seconds_count', 'g_count'].map((n) => notExported(n, [exposition])),
    ).toEqual([undefined, undefined, undefined, undefined]);
    expect(notExported('h_seconds', [exposition])).toBe('h_seconds is declared (HELP/TYPE) but has no sample');
    expect(notExported('c_total', [exposition])).toBe('c_total is declared (HELP/TYPE) but has no sample');
    expect(notExported('x_count', [exposition])).toBe('x_count is not exported');
    expect(notExported('nope', [exposition])).toBe('nope is not exported');
    // Prometheus writes `up` itself for each target (StateRelayInstanceDown reads it).
    expect(notExported('up', [])).toBeUndefined();
  });
});

describe('the alert rules (deploy/prometheus/alerts.yml)', () => {
  const rules = readAlertRules();

  it('cover what the issue asks for', () => {
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        'StateRelayTaskNotRunning',
        'StateRelayConsumerLagGrowing',
        'StateRelayDeadLetters',
        'StateRelayScanFailed',
        'StateRelayReplicaBehind',
        'StateRelayEventCommitLatencyHigh',
      ]),
    );
  });

  it('each wait a while, say how severe they are, and carry a summary and a description with a runbook', () => {
    for (const rule of rules) {
      expect([rule.alert, rule.for]).toEqual([rule.alert, expect.stringMatching(/^\d+[smh]$/)]);
      expect([rule.alert, rule.labels?.severity]).toEqual([rule.alert, expect.stringMatching(/^(critical|warning)$/)]);
      expect([rule.alert, rule.annotations?.summary]).toEqual([rule.alert, expect.any(String)]);
      expect([rule.alert, rule.annotations?.description]).toEqual([rule.alert, expect.stringContaining('Runbook:')]);
    }
  });
});

describe('the Grafana dashboard (deploy/grafana/state-relay.json)', () => {
  const dashboard = readDashboard();
  const graphs = dashboard.panels.filter((p) => p.type !== 'row');

  it('takes its Prometheus from a datasource variable, in every panel and query', () => {
    const variable = dashboard.templating.list.find((v) => v.type === 'datasource');
    expect(variable).toMatchObject({ name: 'datasource', query: 'prometheus' });
    const datasources: unknown[] = [];
    JSON.stringify(dashboard, (key, value) => {
      if (key === 'datasource') datasources.push(value);
      return value;
    });
    expect(datasources.length).toBeGreaterThan(graphs.length);
    for (const ds of datasources) expect(ds).toEqual({ type: 'prometheus', uid: '${datasource}' });
  });

  it('has the panels the issue asks for, each with a query', () => {
    const titles = graphs.map((p) => p.title);
    for (const wanted of [
      /^Task states per instance$/,
      /^Event commit latency p50 \/ p99$/,
      /^Commands per second by outcome$/,
      /^Dead letters per minute by code$/,
      /^Consumer lag$/,
      /^Restores$/,
      /^Instance transactions by outcome$/,
      /^Scans by status$/,
      /^Replica lag$/,
      /^Command results per second by outcome$/,
      /^HTTP requests per second by route and status$/,
      /^HTTP latency p99 by route$/,
    ])
      expect(titles).toContainEqual(expect.stringMatching(wanted));
    for (const panel of graphs) expect([panel.title, panel.targets?.length]).toEqual([panel.title, expect.any(Number)]);
  });
});

describe('every metric the dashboard and the alert rules read', () => {
  it("is declared by a service's registry (the integration test checks running services' samples)", async () => {
    const declared = [
      parseExposition(await createProcessorMetrics().registry.metrics()),
      parseExposition(await createScannerMetrics().registry.metrics()),
    ].map((e) => ({ ...e, samples: new Set([...e.samples, ...e.types.keys()].flatMap(withSeries)) }));
    const problems = [...dashboardQueries(), ...alertQueries()].flatMap(({ where, expr }) =>
      metricNames(expr).flatMap((name) => {
        const problem = notExported(name, declared);
        return problem ? [`${where}: ${problem}`] : [];
      }),
    );
    expect(problems).toEqual([]);
  });
});

/** A family's name and the series names a histogram's samples would carry once observed. */
function withSeries(name: string): string[] {
  return [name, `${name}_bucket`, `${name}_count`, `${name}_sum`];
}
