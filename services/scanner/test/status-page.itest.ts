import { resolve } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { kafkaClient, testBrokers } from '@state-relay/testkit';
import { chromium, type Browser } from 'playwright-core';
import {
  demoEvents,
  newDeployment,
  ProcessorProcess,
  produceEvents,
  STATE_TOKEN,
  waitCaughtUp,
} from '../../processor/test/harness';
import { InProcessScanner, TOKEN } from './scanner-harness';

// Debian's chromium, installed by scripts/browser.sh (called from scripts/test.sh).
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = resolve(__dirname, '../../../docs/status-page.png');

describe('the status page in headless Chromium', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('takes the token, starts a dry run and a rate-limited sweep from the form, charts the sweep and shows both processor instances', async () => {
    const kafka = kafkaClient(testBrokers());
    const d = newDeployment(testBrokers(), 3);
    const procA = new ProcessorProcess(d);
    const procB = new ProcessorProcess(d);
    for (const proc of [procA, procB]) {
      cleanups.push(async () => {
        await proc.kill();
        proc.cleanup();
      });
    }
    await procA.start({ INSTANCE_ID: 'processor-a' });
    await procA.waitReady();
    await produceEvents(kafka, d.eventsTopic, demoEvents(500, 3, 11));
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    // A second instance joins: the tasks it is given are restored from the changelog (records > 0).
    await procB.start({ INSTANCE_ID: 'processor-b' });
    await procB.waitReady();
    await procA.waitReady();
    const scanner = await new InProcessScanner().start(d, {
      PROCESSOR_URLS: `${await procA.url},${await procB.url}`,
      PROCESSOR_API_TOKEN: STATE_TOKEN,
    });
    cleanups.push(() => scanner.stop());
    // A schedule and a finished scan, so the screenshot shows every section.
    await scanner.api.call('POST', '/schedules', {
      name: 'nightly dormancy sweep',
      cron: '0 3 * * *',
      timeZone: 'Europe/Berlin',
      template: { ...DORMANCY_SWEEP, options: { dryRun: true } },
    });

    const browser: Browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    cleanups.push(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });

    await page.goto(`${scanner.api.url}/`);
    expect(page.url()).not.toContain(TOKEN);
    await page.fill('#token', TOKEN);
    await page.press('#token', 'Enter');
    await page.waitForSelector('#schedule-rows tr[data-schedule-id]');

    await page.click('#submit-scan');
    const status = page.locator('#form-status[data-scan-id]');
    await status.waitFor();
    const scanId = await status.getAttribute('data-scan-id');
    expect(scanId).toBeTruthy();
    await page.waitForFunction(
      (id) => document.querySelector(`tr[data-scan-id="${id}"] [data-field="status"]`)?.textContent === 'completed',
      scanId,
      { timeout: 60_000 },
    );
    expect(page.url()).not.toContain(TOKEN);
    expect((await scanner.api.get(scanId!)).status).toBe('completed');

    // A real sweep under a rate limit (about 150 matches at 30/s: several seconds), so the live
    // chart gets a sample every second of commands sent, results and the processor's lag.
    await page.uncheck('#dry-run');
    await page.fill('#rate', '30');
    await page.click('#submit-scan');
    await page.waitForFunction((previous) => {
      const id = document.querySelector('#form-status')?.getAttribute('data-scan-id');
      return id && id !== previous;
    }, scanId);
    const sweepId = await status.getAttribute('data-scan-id');
    await page.waitForFunction(
      (id) => document.querySelector(`tr[data-scan-id="${id}"] [data-field="status"]`)?.textContent === 'completed',
      sweepId,
      { timeout: 120_000 },
    );
    const sweep = await scanner.api.get(sweepId!);
    expect(sweep.counts.results.applied).toBeGreaterThan(0);
    // The chart shows that sweep, drawn with points: both rate series are non-empty and above 0.
    await page.waitForFunction(
      (id) => {
        const svg = document.querySelector('#scan-chart');
        return svg?.getAttribute('data-scan-id') === id && Number(svg.getAttribute('data-max-results')) > 0;
      },
      sweepId,
      { timeout: 30_000 },
    );
    const chart = await page.evaluate(() => {
      const svg = document.querySelector('#scan-chart')!;
      const series = (name: string) => {
        const line = svg.querySelector(`polyline[data-series="${name}"]`);
        return {
          count: Number(line?.getAttribute('data-count') ?? 0),
          coords: (line?.getAttribute('points') ?? '').trim().split(/\s+/).filter(Boolean).length,
        };
      };
      return {
        points: Number(svg.getAttribute('data-points')),
        maxSent: Number(svg.getAttribute('data-max-sent')),
        maxResults: Number(svg.getAttribute('data-max-results')),
        sent: series('sent'),
        results: series('results'),
        lag: series('lag'),
        lagText: document.querySelector('#chart-lag')?.textContent,
        partitions: [...document.querySelectorAll('#partition-rows tr[data-partition]')].map((tr) =>
          tr.getAttribute('data-partition'),
        ),
      };
    });
    expect(chart.points).toBeGreaterThanOrEqual(2);
    expect(chart.maxSent).toBeGreaterThan(0);
    expect(chart.maxResults).toBeGreaterThan(0);
    expect(chart.sent).toEqual({ count: chart.points, coords: chart.points });
    expect(chart.results).toEqual({ count: chart.points, coords: chart.points });
    expect(chart.lag.count).toBeGreaterThan(0); // the processor's command lag was read
    expect(chart.lagText).toMatch(/^\d[\d,]* records$/);
    expect(chart.partitions).toEqual(['0', '1', '2']); // the replica lag per partition

    // Three records that are not JSON: dead letters, committed while the scanner reads the processors (counted in the
    // last minute of its readings).
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: d.eventsTopic,
      messages: ['bad-1', 'bad-2', 'bad-3'].map((key) => ({ key, value: 'not json' })),
    });
    await producer.disconnect();
    // The processor panels, from the scanner's readings of both instances.
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('#proc-dead-rows tr[data-last-minute]')].reduce(
          (sum, tr) => sum + Number(tr.getAttribute('data-last-minute')),
          0,
        ) >= 3,
      undefined,
      { timeout: 60_000 },
    );
    const panels = await page.evaluate(() => {
      const rows = (selector: string) => [...document.querySelectorAll(selector)];
      const attr = (e: Element, name: string) => e.getAttribute(name);
      const lines = (chart: string) =>
        rows(`#${chart} polyline`).map((l) => ({
          series: attr(l, 'data-series'),
          count: Number(attr(l, 'data-count')),
          coords: (attr(l, 'points') ?? '').trim().split(/\s+/).filter(Boolean).length,
        }));
      return {
        instances: rows('#proc-task-rows tr').map((tr) => ({
          reachable: attr(tr, 'data-reachable'),
          name: tr.querySelector('[data-field="instance"]')?.firstChild?.textContent,
          running: Number(tr.querySelector('[data-field="RUNNING"]')?.textContent),
          tasks: Number(attr(tr, 'data-tasks')),
        })),
        restored: rows('#proc-restore-rows tr[data-restore="done"]').map((tr) => Number(attr(tr, 'data-restored'))),
        latency: lines('latency-chart'),
        applied: lines('applied-chart'),
        appliedMax: Number(document.querySelector('#applied-chart')?.getAttribute('data-max')),
        deadTotal: rows('#proc-dead-rows tr[data-total]').reduce((sum, tr) => sum + Number(attr(tr, 'data-total')), 0),
        lagRows: rows('#proc-lag-rows tr[data-partition]').map(
          (tr) => `${attr(tr, 'data-topic')}/${attr(tr, 'data-partition')}`,
        ),
        messages: ['processors-message', 'latency-message', 'applied-message'].map(
          (id) => !document.getElementById(id)?.hidden && document.getElementById(id)?.textContent,
        ),
      };
    });
    expect(panels.instances.map((i) => [i.name, i.reachable])).toEqual([
      ['processor-a', 'true'],
      ['processor-b', 'true'],
    ]);
    expect(panels.instances.reduce((sum, i) => sum + i.running, 0)).toBe(3); // every task RUNNING, on one of them
    expect(panels.instances.every((i) => i.tasks > 0)).toBe(true);
    expect(Math.max(...panels.restored)).toBeGreaterThan(0); // processor-b restored its tasks from the changelog
    for (const series of ['p50', 'p99']) {
      const drawn = panels.latency.filter((l) => l.series === series);
      expect(Math.max(...drawn.map((l) => l.count))).toBeGreaterThan(0);
      expect(drawn.every((l) => l.count === l.coords)).toBe(true);
    }
    expect(Math.max(...panels.applied.map((l) => l.count))).toBeGreaterThan(0);
    expect(panels.appliedMax).toBeGreaterThan(0); // the sweep's applied commands
    expect(panels.deadTotal).toBe(3);
    expect(panels.lagRows.sort()).toEqual(
      [d.eventsTopic, d.commandsTopic].flatMap((t) => [0, 1, 2].map((p) => `${t}/${p}`)).sort(),
    );
    expect(panels.messages).toEqual([false, false, false]);

    await page.waitForTimeout(1_200); // one more poll, so progress bars and counts settle
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // A restore in progress, as the processor would report it mid-restore (too quick to catch live
    // here): the page lists it with its records to go.
    await page.route('**/status*', async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      // Any instance read this time (on a loaded machine a reading may time out now and then).
      const read = body.processors.instances.find((i: { status: unknown }) => i.status !== null);
      if (read) {
        read.status.restores.inProgress = [
          { task: 1, restored: 1200, toGo: 3800, startedAt: new Date().toISOString() },
        ];
      }
      await route.fulfill({ response, json: body });
    });
    await page.waitForSelector('#proc-restore-rows tr[data-restore="in-progress"][data-to-go="3800"]', {
      timeout: 30_000,
    });
    await page.unrouteAll({ behavior: 'ignoreErrors' }); // a reply still in flight is no longer ours to fulfil

    // A processor that goes down shows as unreachable; the scanner and the page go on.
    await procB.kill();
    const down = `#proc-task-rows tr[data-url="${await procB.url}"][data-reachable="false"]`;
    await page.waitForSelector(down, { timeout: 30_000 });
    await page.waitForFunction(
      (selector) => document.querySelector(selector)?.textContent?.includes('connection refused'),
      down,
      { timeout: 15_000 },
    );
    expect((await scanner.api.call('GET', '/status')).status).toBe(200);
    expect(problems).toEqual([]);
  }, 360_000); // two processors, a scanner and a browser on a shared 2-core machine
});
