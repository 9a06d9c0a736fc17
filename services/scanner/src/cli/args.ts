import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import type { ScanOptions } from '../scan';

export const USAGE = `Usage: pnpm scan [--preset dormant | --file scan.json | --condition JSON --action JSON] [options]

Creates a scan on the scanner's API, follows it until it finishes and prints the outcome counts.
Exits 0 only when the scan completed.

  --url URL            scanner API (default http://127.0.0.1:8081)
  --token TOKEN        bearer token (default: env STATE_RELAY_API_TOKEN)
  --preset dormant     the canonical sweep: active and idle for 30 days -> dormant
  --file PATH          a JSON file {condition, action, options?, asOf?}
  --condition JSON     the condition, e.g. '{"field":"status","op":"eq","value":"active"}'
  --action JSON        the action, e.g. '{"set":{"status":"dormant"}}'
  --rate N             commands per second (default unlimited)
  --batch-size N       replica keys walked per chunk
  --max-commands N     stop emitting after N commands
  --dry-run            count matches, emit nothing
  --expect-version     apply each command only at the version the replica saw
  --as-of WHEN         ISO-8601 instant (with a zone) or epoch ms; default now
  --no-follow          create the scan, print it, and exit
  --help               this text`;

export interface CliRequest {
  url: string;
  token: string;
  body: { condition: unknown; action: unknown; options?: ScanOptions; asOf?: string | number };
  follow: boolean;
}

/** Bad flags; the message says which and why. Never contains the token. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Parses the command line; `{ help: true }` when --help was given. Throws UsageError. */
export function parseCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  readFile = (p: string) => readFileSync(p, 'utf8'),
): CliRequest | { help: true } {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        preset: { type: 'string' },
        file: { type: 'string' },
        condition: { type: 'string' },
        action: { type: 'string' },
        rate: { type: 'string' },
        'batch-size': { type: 'string' },
        'max-commands': { type: 'string' },
        'dry-run': { type: 'boolean' },
        'expect-version': { type: 'boolean' },
        'as-of': { type: 'string' },
        'no-follow': { type: 'boolean' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return { help: true };

  const url = values.url ?? 'http://127.0.0.1:8081';
  if (!/^https?:\/\/[^\s/]+/.test(url)) throw new UsageError(`--url must be an http(s) URL, got "${url}"`);
  const token = values.token ?? env.STATE_RELAY_API_TOKEN ?? '';
  if (token === '') throw new UsageError('a token is required: --token or env STATE_RELAY_API_TOKEN');

  const sources = [
    values.preset !== undefined,
    values.file !== undefined,
    values.condition !== undefined || values.action !== undefined,
  ];
  if (sources.filter(Boolean).length !== 1) {
    throw new UsageError('give exactly one of --preset, --file, or --condition with --action');
  }
  let body: CliRequest['body'];
  if (values.preset !== undefined) {
    if (values.preset !== 'dormant')
      throw new UsageError(`unknown --preset "${values.preset}"; the only preset is "dormant"`);
    body = { condition: DORMANCY_SWEEP.condition, action: DORMANCY_SWEEP.action };
  } else if (values.file !== undefined) {
    body = fromFile(values.file, readFile);
  } else {
    if (values.condition === undefined || values.action === undefined)
      throw new UsageError('--condition and --action go together');
    body = { condition: json('--condition', values.condition), action: json('--action', values.action) };
  }

  const options: ScanOptions = { ...(body.options ?? {}) };
  if (values.rate !== undefined) options.rate = number('--rate', values.rate, 0, false);
  if (values['batch-size'] !== undefined) options.batchSize = number('--batch-size', values['batch-size'], 1, true);
  if (values['max-commands'] !== undefined)
    options.maxCommands = number('--max-commands', values['max-commands'], 1, true);
  if (values['dry-run']) options.dryRun = true;
  if (values['expect-version']) options.expectVersion = true;
  if (Object.keys(options).length > 0) body.options = options;
  if (values['as-of'] !== undefined)
    body.asOf = /^\d+$/.test(values['as-of']) ? Number(values['as-of']) : values['as-of'];
  return { url: url.replace(/\/+$/, ''), token, body, follow: !values['no-follow'] };
}

function fromFile(path: string, readFile: (p: string) => string): CliRequest['body'] {
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
  return parsed as CliRequest['body'];
}

function json(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag}: not valid JSON (${(err as Error).message})`);
  }
}

function number(flag: string, text: string, min: number, integer: boolean): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} must be ${integer ? 'an integer' : 'a number'} of at least ${min}, got "${text}"`);
  }
  return n;
}
