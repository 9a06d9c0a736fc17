import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import type { ScanOptions } from '../scans/scan';
import { INTERNAL_CODES, ScannerError } from '../errors';
import { parseJsonQuietly } from './json-input';

export const USAGE = `Usage: pnpm scan [--preset dormant | --file scan.json | --condition JSON --action JSON] [options]

Creates a scan on the scanner's API, follows it until it finishes and prints the outcome counts.
Exits 0 only when the scan completed. The bearer token comes from the environment variable
STATE_RELAY_API_TOKEN or from a file (--token-file), never from the command line:

  STATE_RELAY_API_TOKEN=$(cat .state-relay/api-token) pnpm scan --preset dormant
  pnpm scan --token-file .state-relay/api-token --preset dormant

  --url URL            scanner API (default http://127.0.0.1:8081)
  --token-file PATH    read the bearer token from PATH (default: env STATE_RELAY_API_TOKEN)
  --token TOKEN        deprecated: puts the token in shell history and ps; warns on stderr
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
  /** For stderr: e.g. that --token exposes the token. Never contain the token. */
  warnings: string[];
  body: { condition: unknown; action: unknown; options?: ScanOptions; asOf?: string | number };
  follow: boolean;
}

/** Bad flags; the message says which and why. Never contains the token. */
export class UsageError extends ScannerError<typeof INTERNAL_CODES.USAGE_INVALID> {
  override readonly name = 'UsageError';
  constructor(message: string) {
    super(INTERNAL_CODES.USAGE_INVALID, message);
  }
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
        'token-file': { type: 'string' },
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
  const warnings: string[] = [];
  const token = readToken(values.token, values['token-file'], env, readFile, warnings);

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
  return { url: withoutTrailingSlashes(url), token, warnings, body, follow: !values['no-follow'] };
}

export const TOKEN_FLAG_WARNING =
  'warning: --token puts the token on the command line, where shell history, ps and pnpm (which echoes the ' +
  'command) see it; use env STATE_RELAY_API_TOKEN or --token-file PATH instead';

/** --token-file, else --token (with a warning), else the environment. Messages never quote the token. */
function readToken(
  flag: string | undefined,
  file: string | undefined,
  env: NodeJS.ProcessEnv,
  readFile: (p: string) => string,
  warnings: string[],
): string {
  if (flag !== undefined && file !== undefined) throw new UsageError('give one of --token-file and --token, not both');
  let token: string;
  if (file !== undefined) {
    try {
      token = readFile(file).trim();
    } catch (err) {
      throw new UsageError(`--token-file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'cannot be read'}`);
    }
    if (token === '') throw new UsageError(`--token-file ${file} is empty`);
    if (/\s/.test(token)) throw new UsageError(`--token-file ${file} must hold the token alone, on one line`);
    return token;
  }
  if (flag !== undefined) {
    warnings.push(TOKEN_FLAG_WARNING);
    token = flag;
  } else {
    token = env.STATE_RELAY_API_TOKEN?.trim() ?? '';
  }
  if (token === '') {
    throw new UsageError('a token is required: set env STATE_RELAY_API_TOKEN, or give --token-file PATH');
  }
  return token;
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

/** The message says where the JSON breaks, never what it holds: a file may be a token file by mistake. */
function json(flag: string, text: string): unknown {
  try {
    return parseJsonQuietly(text);
  } catch (err) {
    throw new UsageError(`${flag}: ${(err as Error).message}`);
  }
}

// A loop, not /\/+$/: that expression backtracks quadratically on a long run of slashes.
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charAt(end - 1) === '/') end--;
  return url.slice(0, end);
}

function number(flag: string, text: string, min: number, integer: boolean): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} must be ${integer ? 'an integer' : 'a number'} of at least ${min}, got "${text}"`);
  }
  return n;
}
