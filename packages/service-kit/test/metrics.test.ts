import { Counter } from 'prom-client';
import { createServiceRegistry } from '../src';

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
});
