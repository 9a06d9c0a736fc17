import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import { metricsTableDrift } from '@state-relay/service-kit';
import { createScannerMetrics } from '../src/metrics';
import { PACE_LIMITERS, type PaceState } from '../src/scans/command-pacer';
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

  it('show the walking scan’s paced rate and what limits it, and 0 everywhere when no walk emits', async () => {
    const metrics = createScannerMetrics();
    let pace: PaceState | null = null;
    metrics.bind({ scansByStatus: () => new Map(), replicaLag: () => [], walBytes: () => 0, pace: () => pace });
    let text = await metrics.registry.metrics();
    expect(text).toContain('\nscanner_command_rate 0\n');
    for (const limiter of PACE_LIMITERS)
      expect(text).toContain(`\nscanner_command_rate_limiter{limiter="${limiter}"} 0\n`);
    pace = { rate: 812.5, limiter: 'budget', budgetP99Ms: 138, baselineP99Ms: 115, eventP99Ms: 131 };
    text = await metrics.registry.metrics();
    expect(text).toContain('\nscanner_command_rate 812.5\n');
    expect(text).toContain('\nscanner_command_rate_limiter{limiter="budget"} 1\n');
    expect(text).toContain('\nscanner_command_rate_limiter{limiter="ramp"} 0\n');
  });
});
