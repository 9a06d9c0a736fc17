import { createServiceRegistry, metricFactory, metricsTableDrift, readMetricsTable } from '../src';

const README = `
## Metrics

| metric               | type      | labels            | meaning         |
| -------------------- | --------- | ----------------- | --------------- |
| \`demo_sent_total\`    | counter   | \`topic\`, \`outcome\` | sent            |
| \`demo_level\`         | gauge     | —                 | the level       |
| \`demo_wait_seconds\`  | histogram | —                 | waits           |

After the table.
`;

function demoRegistry() {
  const registry = createServiceRegistry('demo');
  const metrics = metricFactory(registry);
  metrics.counter('demo_sent_total', 'sent', ['topic', 'outcome']);
  metrics.gauge('demo_level', 'level');
  return { registry, metrics };
}

describe("a README's metrics table", () => {
  it('is read as name, type and label names, up to the end of the table', () => {
    expect(readMetricsTable(README)).toEqual([
      { name: 'demo_sent_total', type: 'counter', labels: ['topic', 'outcome'] },
      { name: 'demo_level', type: 'gauge', labels: [] },
      { name: 'demo_wait_seconds', type: 'histogram', labels: [] },
    ]);
  });

  it("agrees with a registry exporting exactly those, Node's default metrics aside", () => {
    const { registry, metrics } = demoRegistry();
    metrics.histogram('demo_wait_seconds', 'waits', [1]);
    expect(metricsTableDrift(registry, README)).toEqual([]);
  });

  it('names each metric only one side has, and another type or other labels', () => {
    const { registry, metrics } = demoRegistry();
    metrics.gauge('demo_wait_seconds', 'not a histogram', ['part']);
    metrics.counter('demo_new_total', 'undocumented');
    expect(metricsTableDrift(registry, README)).toEqual([
      'demo_wait_seconds: the README says histogram, the registry gauge',
      "demo_wait_seconds: the README's labels are {}, the registry's {part}",
      'demo_new_total is exported but not documented',
    ]);
    const bare = createServiceRegistry('demo');
    expect(metricsTableDrift(bare, README)).toEqual([
      'demo_sent_total is documented but not exported',
      'demo_level is documented but not exported',
      'demo_wait_seconds is documented but not exported',
    ]);
    expect(metricsTableDrift(bare, '# no table')).toEqual(['the README has no table whose first column is "metric"']);
  });
});
