import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { kafkaClient, testBrokers } from '@state-relay/testkit';
import {
  demoEvents,
  newDeployment,
  ProcessorProcess,
  produceEvents,
  waitCaughtUp,
} from '../../services/processor/test/harness';
import { ScannerProcess } from '../../services/scanner/test/scanner-harness';
import {
  alertQueries,
  dashboardQueries,
  metricNames,
  notExported,
  parseExposition,
  SCRAPE_SERIES,
  type Query,
} from './queries';

// deploy/'s dashboard and alert rules read only what the services export: both run as the
// processes Prometheus scrapes (the built servers), fold events and complete a scan, and every
// metric name in the dashboard's and the rules' PromQL must be on one of their /metrics pages with
// at least one sample (a family declared but never observed would let a typo'd label or a dead
// panel through).

const AS_OF = Date.UTC(2026, 10, 1); // demoEvents' "now"

describe('the dashboard and the alert rules (deploy/) against running services', () => {
  const cleanups: Array<() => Promise<unknown> | void> = [];
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('read only metrics the processor and the scanner export, with samples, once they have worked', async () => {
    const kafka = kafkaClient(testBrokers());
    const d = newDeployment(testBrokers(), 3);
    const processor = new ProcessorProcess(d);
    cleanups.push(async () => {
      await processor.stop();
      processor.cleanup();
    });
    await processor.start();
    await processor.waitReady();
    await produceEvents(kafka, d.eventsTopic, demoEvents(300, 3, 24));
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);

    const scanner = new ScannerProcess(d);
    cleanups.push(async () => {
      await scanner.stop();
      scanner.cleanup();
    });
    await scanner.start();
    const scan = await scanner.api.create({ ...DORMANCY_SWEEP, asOf: AS_OF });
    expect((await scanner.api.finished(scan.id)).status).toBe('completed');
    await waitCaughtUp(kafka, d.appId, d.commandsTopic);

    // One request each service answers with no route, so the HTTP series are not only probes.
    await fetch(`${await processor.url}/no-such-route`);
    await fetch(`${scanner.api.url}/no-such-route`);
    const scrape = async (url: string) => parseExposition(await (await fetch(`${url}/metrics`)).text());
    const exported = [await scrape(await processor.url), await scrape(scanner.api.url)];

    const queries: Query[] = [...dashboardQueries(), ...alertQueries()];
    const named = queries.flatMap((q) =>
      metricNames(q.expr)
        .filter((name) => !SCRAPE_SERIES.has(name))
        .map((name) => ({ ...q, name })),
    );
    // Both services, every part of the dashboard and every alert are covered.
    expect(new Set(named.map((n) => n.name.split('_')[0]))).toEqual(new Set(['processor', 'scanner']));
    expect(queries.filter((q) => metricNames(q.expr).length === 0)).toEqual([]);
    const problems = named.flatMap(({ where, name }) => {
      const problem = notExported(name, exported);
      return problem ? [`${where}: ${problem}`] : [];
    });
    expect(problems).toEqual([]);
  });
});
