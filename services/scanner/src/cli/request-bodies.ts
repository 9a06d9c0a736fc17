// The bodies of POST /scans and POST /schedules, from the flags: the rule (a preset, a file, or
// --condition with --action), then the options the flags set over the file's.
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { parseLatencyBudget } from '../scans/latency-budget';
import type { ScanOptions } from '../scans/scan';
import { parseJsonQuietly } from './json-input';
import { UsageError } from './errors';

/** The flags' values as parseArgs gives them. */
export type FlagValues = Partial<Record<string, string | boolean>>;

export interface ScanBody {
  condition: unknown;
  action: unknown;
  options?: ScanOptions;
  asOf?: string | number;
}

export interface ScheduleBody {
  name: string;
  interval?: string;
  cron?: string;
  timeZone?: string;
  template: { condition: unknown; action: unknown; options?: ScanOptions };
}

export function scanBody(values: FlagValues, readFile: (p: string) => string): ScanBody {
  const body = ruleBody(values, readFile);
  const asOf = str(values, 'as-of');
  if (asOf !== undefined) body.asOf = /^\d+$/.test(asOf) ? Number(asOf) : asOf;
  return body;
}

/** The template is a scan file without asOf; a file holding one is left for the API to refuse. */
export function scheduleBody(values: FlagValues, readFile: (p: string) => string): ScheduleBody {
  const name = str(values, 'name');
  if (name === undefined) throw new UsageError('--name is required');
  const interval = str(values, 'interval');
  const cron = str(values, 'cron');
  if ((interval === undefined) === (cron === undefined))
    throw new UsageError('give exactly one of --interval and --cron');
  const timeZone = str(values, 'time-zone');
  return {
    name,
    ...(interval !== undefined ? { interval } : { cron: cron! }),
    ...(timeZone !== undefined ? { timeZone } : {}),
    template: ruleBody(values, readFile),
  };
}

function ruleBody(values: FlagValues, readFile: (p: string) => string): ScanBody {
  const preset = str(values, 'preset');
  const file = str(values, 'file');
  const condition = str(values, 'condition');
  const action = str(values, 'action');
  const sources = [preset !== undefined, file !== undefined, condition !== undefined || action !== undefined];
  if (sources.filter(Boolean).length !== 1) {
    throw new UsageError('give exactly one of --preset, --file, or --condition with --action');
  }
  let body: ScanBody;
  if (preset !== undefined) {
    if (preset !== 'dormant') throw new UsageError(`unknown --preset "${preset}"; the only preset is "dormant"`);
    body = { condition: DORMANCY_SWEEP.condition, action: DORMANCY_SWEEP.action };
  } else if (file !== undefined) {
    body = fromFile(file, readFile);
  } else {
    if (condition === undefined || action === undefined) throw new UsageError('--condition and --action go together');
    body = { condition: json('--condition', condition), action: json('--action', action) };
  }

  const options: ScanOptions = { ...(body.options ?? {}) };
  const rate = str(values, 'rate');
  const batchSize = str(values, 'batch-size');
  const maxCommands = str(values, 'max-commands');
  if (rate !== undefined) options.rate = number('--rate', rate, 0, false);
  if (batchSize !== undefined) options.batchSize = number('--batch-size', batchSize, 1, true);
  if (maxCommands !== undefined) options.maxCommands = number('--max-commands', maxCommands, 1, true);
  if (values['dry-run'] === true) options.dryRun = true;
  if (values['expect-version'] === true) options.expectVersion = true;
  const budget = str(values, 'latency-budget');
  if (budget !== undefined) {
    // The same forms as SCAN_LATENCY_BUDGET; the API judges the bounds again.
    const parsed = parseLatencyBudget(budget);
    if ('problem' in parsed) throw new UsageError(`--latency-budget ${parsed.problem}`);
    options.latencyBudget = parsed.budget;
  }
  // The API judges the duration (PT1S to P366D) and names the field.
  const maxDuration = str(values, 'max-duration');
  if (maxDuration !== undefined) options.maxDuration = maxDuration;
  if (Object.keys(options).length > 0) body.options = options;
  return body;
}

function fromFile(path: string, readFile: (p: string) => string): ScanBody {
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    throw new UsageError(`--file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const parsed = json(`--file ${path}`, text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`--file ${path}: expected a JSON object {condition, action, options?, asOf?}`);
  }
  return parsed as ScanBody;
}

/** The message says where the JSON breaks, never what it holds: a file may be a token file by mistake. */
function json(flag: string, text: string): unknown {
  try {
    return parseJsonQuietly(text);
  } catch (err) {
    throw new UsageError(`${flag}: ${(err as Error).message}`);
  }
}

export function str(values: FlagValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function number(flag: string, text: string, min: number, integer: boolean): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} must be ${integer ? 'an integer' : 'a number'} of at least ${min}, got "${text}"`);
  }
  return n;
}
