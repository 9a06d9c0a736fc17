import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import { metricsTableDrift } from '@state-relay/service-kit';
import { createScannerMetrics } from '../src/metrics';
import { SCAN_STATUSES } from '../src/scans/scan';

describe("the scanner's metrics", () => {
  it("are what README.md's metrics table says: every metric, its type and labels", () => {
    const readme = readFileSync(join(__dirname, '../README.md'), 'utf8');
    expect(metricsTableDrift(createScannerMetrics().registry, readme)).toEqual([]);
  });

  it('export every scan status and command outcome before anything happened', async () => {
    const text = await createScannerMetrics().registry.metrics();
    for (const status of SCAN_STATUSES) expect(text).toContain(`\nscanner_scans{status="${status}"} 0\n`);
    for (const outcome of COMMAND_OUTCOMES)
      expect(text).toContain(`\nscanner_command_results_total{outcome="${outcome}"} 0\n`);
  });
});
