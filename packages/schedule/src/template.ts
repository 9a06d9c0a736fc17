import { ScheduleArgumentError } from './errors';

/** What a schedule runs: a scan body without `asOf`. Relative times (`{"$ago": "P30D"}`) stay relative. */
export interface ScanTemplate<C = unknown, A = unknown, O = unknown> {
  condition: C;
  action: A;
  options?: O;
}

export interface ResolvedScan<C = unknown, A = unknown, O = unknown> extends ScanTemplate<C, A, O> {
  /** The run's time (epoch ms): every `$ago` of this run resolves against it. */
  asOf: number;
}

/**
 * The scan one run creates. The template is stored with its relative times untouched, so each run
 * judges "30 days ago" from its own time: only `asOf` changes from run to run. Copies, never shares.
 */
export function resolveTemplate<C, A, O>(template: ScanTemplate<C, A, O>, runAt: number): ResolvedScan<C, A, O> {
  if (!Number.isSafeInteger(runAt) || runAt < 0) {
    throw new ScheduleArgumentError(`runAt must be a time in whole epoch ms, got ${String(runAt)}`);
  }
  const scan: ResolvedScan<C, A, O> = {
    condition: structuredClone(template.condition),
    action: structuredClone(template.action),
    asOf: runAt,
  };
  if (template.options !== undefined) scan.options = structuredClone(template.options);
  return scan;
}
