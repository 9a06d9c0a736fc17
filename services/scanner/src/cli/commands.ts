// What the CLI knows of its commands: every flag (one table, for node's parseArgs and for help),
// and each noun's verbs with their arguments and flags.

export interface FlagSpec {
  type: 'string' | 'boolean';
  /** The value's name in help (`--rate N`); none for a boolean. */
  value?: string;
  help: string;
}

export const FLAGS = {
  url: { type: 'string', value: 'URL', help: 'scanner API (default: env STATE_RELAY_URL, else http://127.0.0.1:8081)' },
  'token-file': {
    type: 'string',
    value: 'PATH',
    help: 'read the bearer token from PATH (default: env STATE_RELAY_API_TOKEN)',
  },
  token: {
    type: 'string',
    value: 'TOKEN',
    help: 'deprecated: puts the token in shell history and ps; warns on stderr',
  },
  json: { type: 'boolean', help: 'print one JSON document on stdout (progress and messages go to stderr)' },
  help: { type: 'boolean', help: 'this text' },
  version: { type: 'boolean', help: "print the scanner package's version" },
  preset: { type: 'string', value: 'dormant', help: 'the canonical sweep: active and idle for 30 days -> dormant' },
  file: { type: 'string', value: 'PATH', help: 'a JSON file {condition, action, options?} (a scan file may add asOf)' },
  condition: {
    type: 'string',
    value: 'JSON',
    help: `the condition, e.g. '{"field":"status","op":"eq","value":"active"}'`,
  },
  action: { type: 'string', value: 'JSON', help: `the action, e.g. '{"set":{"status":"dormant"}}'` },
  rate: { type: 'string', value: 'N', help: 'commands per second (default unlimited)' },
  'batch-size': { type: 'string', value: 'N', help: 'replica keys walked per chunk' },
  'max-commands': { type: 'string', value: 'N', help: 'stop emitting after N commands' },
  'dry-run': { type: 'boolean', help: 'count matches, emit nothing' },
  'expect-version': { type: 'boolean', help: 'apply each command only at the version the replica saw' },
  'latency-budget': {
    type: 'string',
    value: 'BUDGET',
    help: 'event p99 the sweep may reach: 1.2x (of the p99 before it), 300ms, or off (default: the scanner’s)',
  },
  'max-duration': {
    type: 'string',
    value: 'DURATION',
    help: 'end the scan failed if it runs longer: ISO-8601, PT6H (default: the scanner’s, 24 h)',
  },
  'as-of': { type: 'string', value: 'WHEN', help: 'ISO-8601 instant (with a zone) or epoch ms; default now' },
  'no-follow': { type: 'boolean', help: 'create the scan, print it, and exit' },
  limit: { type: 'string', value: 'N', help: 'scans per page, 1 to 100 (default 20)' },
  offset: { type: 'string', value: 'N', help: 'scans to skip, newest first (default 0)' },
  name: { type: 'string', value: 'NAME', help: "the schedule's name (required)" },
  interval: { type: 'string', value: 'DURATION', help: 'run every ISO-8601 duration: PT1H, P1D (or --cron)' },
  cron: { type: 'string', value: 'EXPR', help: `run on a five-field cron or @alias: '0 3 * * *' (or --interval)` },
  'time-zone': { type: 'string', value: 'TZ', help: 'IANA time zone of the schedule (default UTC)' },
} as const satisfies Record<string, FlagSpec>;

export type FlagName = keyof typeof FLAGS;

/** Flags every command takes. */
export const GLOBAL_FLAGS: readonly FlagName[] = ['url', 'token-file', 'token', 'json', 'help', 'version'];

const RULE_FLAGS: FlagName[] = ['preset', 'file', 'condition', 'action'];
const OPTION_FLAGS: FlagName[] = [
  'rate',
  'batch-size',
  'max-commands',
  'dry-run',
  'expect-version',
  'latency-budget',
  'max-duration',
];

export interface VerbSpec {
  /** Positional arguments, in order, each required. */
  args: readonly string[];
  flags: readonly FlagName[];
  summary: string;
  /** More of what it does, for its --help. */
  details: string;
}

export const NOUNS = {
  scans: {
    list: {
      args: [],
      flags: ['limit', 'offset'],
      summary: 'list scans, newest first',
      details: 'Lists one page of scans (GET /scans), newest first, with their counts.',
    },
    get: {
      args: ['ID'],
      flags: [],
      summary: 'show one scan',
      details:
        'Shows one scan (GET /scans/ID): status, times, rule, counts and outcome counts. Exits 0 whatever its status.',
    },
    create: {
      args: [],
      flags: [...RULE_FLAGS, ...OPTION_FLAGS, 'as-of', 'no-follow'],
      summary: 'create a scan, follow it to the end (the default command)',
      details:
        'Creates a scan (POST /scans, with an Idempotency-Key of its own, sent again if the scanner cannot be\n' +
        "reached) from one of --preset, --file, or --condition with --action; the flags override a file's\n" +
        'options. Then follows it until it finishes and prints the outcome counts: exit 0 only when it completed.',
    },
    cancel: {
      args: ['ID'],
      flags: [],
      summary: 'cancel a pending or running scan',
      details:
        'Cancels a scan (POST /scans/ID/cancel): a pending one at once, a running one at its next chunk\n' +
        'boundary. Commands already sent still get their results. A finished scan is an API error (409).',
    },
    follow: {
      args: ['ID'],
      flags: [],
      summary: 'follow a scan until it finishes',
      details: 'Follows a scan until it finishes and prints the outcome counts: exit 0 when it completed, 1 otherwise.',
    },
  },
  schedules: {
    list: {
      args: [],
      flags: [],
      summary: 'list schedules, oldest first',
      details: 'Lists every schedule (GET /schedules), oldest first, with its next and last run.',
    },
    get: {
      args: ['ID'],
      flags: [],
      summary: 'show one schedule and its last runs',
      details: 'Shows one schedule (GET /schedules/ID), its template and its newest 10 runs.',
    },
    create: {
      args: [],
      flags: ['name', 'interval', 'cron', 'time-zone', ...RULE_FLAGS, ...OPTION_FLAGS],
      summary: 'create a schedule',
      details:
        'Creates a schedule (POST /schedules, with an Idempotency-Key of its own, sent again if the scanner\n' +
        'cannot be reached): --name, one of --interval or --cron, and the template from one of --preset,\n' +
        '--file or --condition with --action. Each run is an ordinary scan with asOf = the run time.',
    },
    pause: {
      args: ['ID'],
      flags: [],
      summary: 'pause a schedule',
      details: 'Pauses a schedule (PATCH /schedules/ID {"paused":true}): no run starts until it is resumed.',
    },
    resume: {
      args: ['ID'],
      flags: [],
      summary: 'resume a schedule',
      details:
        'Resumes a schedule (PATCH /schedules/ID {"paused":false}); the paused time is not made up: the next\n' +
        'run is the next due time after now.',
    },
    delete: {
      args: ['ID'],
      flags: [],
      summary: 'delete a schedule (its scans stay)',
      details: 'Deletes a schedule (DELETE /schedules/ID); its scans stay and a running one is not cancelled.',
    },
  },
} as const satisfies Record<string, Record<string, VerbSpec>>;

export type Noun = keyof typeof NOUNS;
export type CommandName = {
  [N in Noun]: `${N} ${Extract<keyof (typeof NOUNS)[N], string>}`;
}[Noun];

export function isNoun(word: string): word is Noun {
  return Object.hasOwn(NOUNS, word);
}

export function verbSpec(noun: Noun, verb: string): VerbSpec | undefined {
  const verbs: Record<string, VerbSpec> = NOUNS[noun];
  return Object.hasOwn(verbs, verb) ? verbs[verb] : undefined;
}
