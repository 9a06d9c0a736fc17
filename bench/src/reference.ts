import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The run the "not slower than before" aims compare with: docs/benchmarks/reference.json, the
 * latest.json a `pnpm bench` run wrote before the processor core changed (issue 11). It is a
 * run's own output, kept as it was written; the bench reads its figures, nothing is typed in.
 */
export interface Reference {
  path: string;
  date: string;
  label: string;
  throughputEvents: number;
  eventsPerAccount: number;
  keys: number;
  /** Restore after the throughput run (changelog written by the processor). */
  restore: { records: number; ms: number; recordsPerSec: number };
  /** Restore of the seeded sweep state, one per deployment: records / ms. */
  seededRestores: Array<{ records: number; ms: number }>;
}

export const REFERENCE_PATH = join('docs', 'benchmarks', 'reference.json');

interface ReportShape {
  machine: { date: string };
  options: { label: string; throughputEvents: number; eventsPerAccount: number; keys: number };
  throughput: { restore: { records: number; ms: number; recordsPerSec: number } };
  sweeps: { results: Array<{ restore: { records: number; ms: number } }> };
}

export function loadReference(root: string): Reference | undefined {
  const path = join(root, REFERENCE_PATH);
  if (!existsSync(path)) return undefined;
  try {
    const r = JSON.parse(readFileSync(path, 'utf8')) as ReportShape;
    return {
      path: REFERENCE_PATH,
      date: r.machine.date,
      label: r.options.label,
      throughputEvents: r.options.throughputEvents,
      eventsPerAccount: r.options.eventsPerAccount,
      keys: r.options.keys,
      restore: r.throughput.restore,
      seededRestores: r.sweeps.results.map((x) => x.restore),
    };
  } catch {
    return undefined;
  }
}
