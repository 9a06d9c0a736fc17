// The --help texts, made from the command table so a flag cannot be missing from its help.
import { FLAGS, GLOBAL_FLAGS, NOUNS, type FlagName, type Noun, type VerbSpec } from './commands';

const PROGRAM = 'state-relay';

function flagLines(names: readonly FlagName[]): string[] {
  const labels = names.map((n) => {
    const spec = FLAGS[n] as { value?: string };
    return `--${n}${spec.value ? ` ${spec.value}` : ''}`;
  });
  const width = Math.max(...labels.map((l) => l.length)) + 2;
  return names.map((n, i) => `  ${labels[i]!.padEnd(width)}${FLAGS[n].help}`);
}

function verbs(noun: Noun): Array<[string, VerbSpec]> {
  return Object.entries(NOUNS[noun]);
}

function commandLine(noun: Noun, verb: string, spec: VerbSpec): string {
  return [noun, verb, ...spec.args].join(' ');
}

const EXIT_LINES = [
  'Exit codes:',
  '  0    done (create and follow: the scan completed)',
  '  1    the followed scan was cancelled or failed',
  '  2    bad flags or arguments (usage)',
  '  3    the API answered with an error, or could not be reached',
  '  4    no such scan or schedule (404)',
  '  130  Ctrl-C while following: the scan goes on',
];

const TOKEN_LINES = [
  'The bearer token comes from the environment variable STATE_RELAY_API_TOKEN or from a file',
  '(--token-file), never from the command line.',
];

const CREATE_EXAMPLES = [
  '  STATE_RELAY_API_TOKEN=$(cat .state-relay/api-token) pnpm scan --preset dormant',
  '  pnpm scan --token-file .state-relay/api-token --preset dormant',
  '  state-relay scans create --token-file .state-relay/api-token --preset dormant --rate 200 --json',
];

/** `state-relay --help`: every command, the flags they share, the exit codes. */
export function mainHelp(): string {
  const rows: string[] = [];
  for (const noun of Object.keys(NOUNS) as Noun[]) {
    for (const [verb, spec] of verbs(noun)) rows.push(`  ${commandLine(noun, verb, spec).padEnd(26)}${spec.summary}`);
  }
  return [
    `Usage: ${PROGRAM} <scans|schedules> <verb> [ID] [flags]      (from a checkout: pnpm scan ...)`,
    '',
    "The scanner's scans and schedules, over its HTTP API.",
    '',
    'Commands:',
    ...rows,
    '',
    ...TOKEN_LINES,
    'Without a command it is `scans create`, as the first CLI was:',
    '',
    ...CREATE_EXAMPLES,
    '',
    'Flags of every command:',
    ...flagLines(GLOBAL_FLAGS),
    '',
    ...EXIT_LINES,
    '',
    `${PROGRAM} <noun> <verb> --help shows a command's own flags.`,
  ].join('\n');
}

/** `state-relay scans --help`: the noun's verbs. */
export function nounHelp(noun: Noun): string {
  return [
    `Usage: ${PROGRAM} ${noun} <verb> [ID] [flags]`,
    '',
    'Verbs:',
    ...verbs(noun).map(([verb, spec]) => `  ${commandLine(noun, verb, spec).padEnd(26)}${spec.summary}`),
    '',
    `${PROGRAM} ${noun} <verb> --help shows a verb's flags.`,
  ].join('\n');
}

/** `state-relay scans create --help`: what it does, its flags, then the shared ones. */
export function verbHelp(noun: Noun, verb: string, spec: VerbSpec): string {
  const own = spec.flags.length > 0 ? ['', 'Flags:', ...flagLines(spec.flags)] : [];
  const examples = noun === 'scans' && verb === 'create' ? ['', ...CREATE_EXAMPLES] : [];
  return [
    `Usage: ${PROGRAM} ${commandLine(noun, verb, spec)}${spec.flags.length > 0 ? ' [flags]' : ''}`,
    '',
    spec.details,
    '',
    ...TOKEN_LINES,
    ...examples,
    ...own,
    '',
    'Flags of every command:',
    ...flagLines(GLOBAL_FLAGS),
    '',
    ...EXIT_LINES,
  ].join('\n');
}
