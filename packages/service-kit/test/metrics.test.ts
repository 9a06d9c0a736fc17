import { Counter } from 'prom-client';
import { createServiceRegistry, metricFactory } from '../src';

describe('a service registry', () => {
  it("has Node's default metrics under their standard names, labelled with the service", async () => {
    const registry = createServiceRegistry('scanner');
    const text = await registry.metrics();
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
    ])
      expect(text).toMatch(new RegExp(`^${name}\\{service="scanner"\\} `, 'm'));
    expect(text).not.toMatch(/^scanner_/m);
  });

  it("leaves the service's own metrics without the label", async () => {
    const registry = createServiceRegistry('scanner');
    new Counter({ name: 'scanner_things_total', help: 'things', registers: [registry] }).inc();
    expect(await registry.metrics()).toMatch(/^scanner_things_total 1$/m);
  });

  it('declares counters, gauges and histograms on it, each in one call', async () => {
    const registry = createServiceRegistry('scanner');
    const metrics = metricFactory(registry);
    metrics.counter('scanner_sent_total', 'sent', ['topic']).inc({ topic: 't' }, 2);
    metrics.gauge('scanner_level', 'level').set(3);
    let collected = 0;
    metrics.gauge('scanner_collected', 'collected', ['part'], function () {
      this.set({ part: 'a' }, ++collected);
    });
    metrics.histogram('scanner_wait_seconds', 'wait', [0.1, 1]).observe(0.5);
    const text = await registry.metrics();
    expect(text).toMatch(/^# HELP scanner_sent_total sent$/m);
    expect(text).toMatch(/^scanner_sent_total\{topic="t"\} 2$/m);
    expect(text).toMatch(/^scanner_level 3$/m);
    expect(text).toMatch(/^scanner_collected\{part="a"\} 1$/m);
    expect(text).toMatch(/^scanner_wait_seconds_bucket\{le="1"\} 1$/m);
  });

  it('exports the label sets a counter is given at 0 before their first increment', async () => {
    const registry = createServiceRegistry('scanner');
    const metrics = metricFactory(registry);
    const sent = metrics.counter('scanner_sent_total', 'sent', ['outcome'], [{ outcome: 'ok' }, { outcome: 'lost' }]);
    sent.inc({ outcome: 'ok' });
    const text = await registry.metrics();
    expect(text).toMatch(/^scanner_sent_total\{outcome="ok"\} 1$/m);
    expect(text).toMatch(/^scanner_sent_total\{outcome="lost"\} 0$/m);
  });
});
