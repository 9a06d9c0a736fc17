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

  it('takes the token, starts a dry run from the form and shows it reach completed', async () => {
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
    await page.waitForTimeout(1_200); // one more poll, so progress bars and counts settle
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(problems).toEqual([]);
  });
});
