// The command line: `state-relay <noun> <verb> [ID] [flags]`, or flags alone (= `scans create`,
// the first CLI's form). Flags may come before or after the words. Pure apart from reading files.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FLAGS, GLOBAL_FLAGS, isNoun, NOUNS, verbSpec, type CommandName, type Noun } from './commands';
import { mainHelp, nounHelp, verbHelp } from './help';
import {
  number,
  scanBody,
  scheduleBody,
  str,
  type FlagValues,
  type ScanBody,
  type ScheduleBody,
} from './request-bodies';
import { UsageError } from './errors';
import { redactUrl } from './escape';

export { UsageError };

export const DEFAULT_URL = 'http://127.0.0.1:8081';

export type CliRequest =
  | { command: 'scans create'; body: ScanBody; follow: boolean }
  | { command: 'scans list'; limit?: number; offset?: number }
  | { command: 'scans get' | 'scans cancel' | 'scans follow'; id: string }
  | { command: 'schedules create'; body: ScheduleBody }
  | { command: 'schedules list' }
  | { command: 'schedules get' | 'schedules pause' | 'schedules resume' | 'schedules delete'; id: string };

export type Invocation =
  | { kind: 'help'; text: string }
  | { kind: 'version' }
  | {
      kind: 'run';
      url: string;
      token: string;
      json: boolean;
      /** For stderr: e.g. that --token exposes the token. Never contain the token. */
      warnings: string[];
      request: CliRequest;
    };

/** Parses the command line. Throws UsageError, whose message never quotes the token. */
export function parseCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  readFile = (p: string) => readFileSync(p, 'utf8'),
): Invocation {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, strict: true, allowPositionals: true, tokens: true, options: FLAGS });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const values = parsed.values as FlagValues;
  const [nounWord, verbWord, ...args] = parsed.positionals;

  // No words: `scans create`, so `pnpm scan --preset dormant` keeps working; --help is the main help.
  let noun: Noun = 'scans';
  let verb = 'create';
  if (nounWord === undefined) {
    if (values.help) return { kind: 'help', text: mainHelp() };
  } else {
    if (!isNoun(nounWord)) {
      throw new UsageError(`unknown command "${nounWord}"; the commands are ${Object.keys(NOUNS).join(' and ')}`);
    }
    noun = nounWord;
    if (verbWord === undefined) {
      if (values.help) return { kind: 'help', text: nounHelp(noun) };
      throw new UsageError(`${noun} needs a verb: ${Object.keys(NOUNS[noun]).join(', ')}`);
    }
    verb = verbWord;
  }
  const spec = verbSpec(noun, verb);
  if (spec === undefined) {
    throw new UsageError(`unknown verb "${verb}" of ${noun}; its verbs are ${Object.keys(NOUNS[noun]).join(', ')}`);
  }
  const command = `${noun} ${verb}` as CommandName;
  if (values.help) return { kind: 'help', text: verbHelp(noun, verb, spec) };
  if (values.version) return { kind: 'version' };

  const allowed = new Set<string>([...GLOBAL_FLAGS, ...spec.flags]);
  for (const token of parsed.tokens ?? []) {
    if (token.kind === 'option' && !allowed.has(token.name)) {
      throw new UsageError(`--${token.name} is not a flag of "${command}" (see: state-relay ${command} --help)`);
    }
  }
  if (args.length !== spec.args.length) {
    const wanted = spec.args.length === 0 ? 'no arguments' : spec.args.join(' ');
    throw new UsageError(`"${command}" takes ${wanted}, got ${args.length === 0 ? 'none' : `"${args.join(' ')}"`}`);
  }

  const url = readUrl(values, env);
  const warnings: string[] = [];
  const token = readToken(str(values, 'token'), str(values, 'token-file'), env, readFile, warnings);
  const request = buildRequest(command, args, values, readFile);
  return { kind: 'run', url, token, json: values.json === true, warnings, request };
}

function buildRequest(
  command: CommandName,
  args: string[],
  values: FlagValues,
  readFile: (p: string) => string,
): CliRequest {
  const id = args[0] ?? '';
  switch (command) {
    case 'scans create':
      return { command, body: scanBody(values, readFile), follow: values['no-follow'] !== true };
    case 'scans list': {
      const limit = str(values, 'limit');
      const offset = str(values, 'offset');
      return {
        command,
        ...(limit !== undefined ? { limit: number('--limit', limit, 1, true) } : {}),
        ...(offset !== undefined ? { offset: number('--offset', offset, 0, true) } : {}),
      };
    }
    case 'schedules create':
      return { command, body: scheduleBody(values, readFile) };
    case 'schedules list':
      return { command };
    default:
      return { command, id };
  }
}

function readUrl(values: FlagValues, env: NodeJS.ProcessEnv): string {
  const flag = str(values, 'url');
  const fromEnv = env.STATE_RELAY_URL?.trim() || undefined;
  const url = flag ?? fromEnv ?? DEFAULT_URL;
  if (!/^https?:\/\/[^\s/]+/.test(url)) {
    throw new UsageError(
      `${flag !== undefined ? '--url' : 'STATE_RELAY_URL'} must be an http(s) URL, got "${redactUrl(url)}"`,
    );
  }
  return withoutTrailingSlashes(url);
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

// A loop, not /\/+$/: that expression backtracks quadratically on a long run of slashes.
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charAt(end - 1) === '/') end--;
  return url.slice(0, end);
}
