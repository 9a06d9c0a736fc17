import { resolve } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { kafkaClient, testBrokers } from '@state-relay/testkit';
import { chromium, type Browser } from 'playwright-core';
import { demoEvents, newDeployment, ProcessorProcess, produceEvents, waitCaughtUp } from '../../processor/test/harness';
import { InProcessScanner, TOKEN } from './scanner-harness';

// Debian's chromium, installed by scripts/browser.sh (called from scripts/test.sh).
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = resolve(__dirname, '../../../docs/status-page.png');

describe('the status page in headless Chromium', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('takes the token, starts a dry run and a rate-limited sweep from the form, and charts the sweep', async () => {
    const kafka = kafkaClient(testBrokers());
    const d = newDeployment(testBrokers(), 3);
    const proc = new ProcessorProcess(d);
    cleanups.push(async () => {
      await proc.kill();
      proc.cleanup();
    });
    await proc.start();
    await proc.waitReady();
    await produceEvents(kafka, d.eventsTopic, demoEvents(500, 3, 11));
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    const scanner = await new InProcessScanner().start(d);
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

    await page.waitForTimeout(1_200); // one more poll, so progress bars and counts settle
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(problems).toEqual([]);
  });
});
