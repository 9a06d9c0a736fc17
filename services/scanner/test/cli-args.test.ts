import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { parseCli, TOKEN_FLAG_WARNING, UsageError, type CliRequest, type Invocation } from '../src/cli/args';
import { FLAGS, NOUNS } from '../src/cli/commands';
import { mainHelp, nounHelp, verbHelp } from '../src/cli/help';

const env = { STATE_RELAY_API_TOKEN: 'env-token-0123456789' };

function usageError(argv: string[], files: Record<string, string> = {}, environment: NodeJS.ProcessEnv = env): string {
  try {
    parseCli(argv, environment, (p) => {
      if (!(p in files)) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return files[p]!;
    });
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error('expected a usage error');
}

function request(argv: string[], files: Record<string, string> = {}): CliRequest {
  const parsed = parseCli(argv, env, (p) => files[p]!);
  if (parsed.kind !== 'run') throw new Error(`expected a command, got ${parsed.kind}`);
  return parsed.request;
}

describe('CLI arguments: the first form (flags alone = scans create)', () => {
  it('builds the canonical sweep from --preset dormant, with the token from the environment', () => {
    expect(parseCli(['--preset', 'dormant', '--rate', '50', '--dry-run'], env)).toEqual({
      kind: 'run',
      url: 'http://127.0.0.1:8081',
      token: 'env-token-0123456789',
      json: false,
      warnings: [],
      request: {
        command: 'scans create',
        body: { ...DORMANCY_SWEEP, options: { rate: 50, dryRun: true } },
        follow: true,
      },
    });
  });

  it('takes --max-duration into the options (scans and schedules), for the API to judge', () => {
    const options = (args: string[]) =>
      (request(args) as { body: { options?: unknown; template?: { options?: unknown } } }).body;
    expect(options(['--preset', 'dormant', '--max-duration', 'PT6H']).options).toEqual({ maxDuration: 'PT6H' });
    expect(
      options([
        'schedules',
        'create',
        '--name',
        'n',
        '--interval',
        'PT1H',
        '--preset',
        'dormant',
        '--max-duration',
        'P1D',
      ]).template?.options,
    ).toEqual({ maxDuration: 'P1D' });
  });

  it('takes a latency budget as a ratio, milliseconds or off, and refuses other forms as a usage error', () => {
    const budget = (value: string) =>
      (request(['--preset', 'dormant', '--latency-budget', value]) as { body: { options: unknown } }).body.options;
    expect(budget('1.3x')).toEqual({ latencyBudget: { ratio: 1.3 } });
    expect(budget('250ms')).toEqual({ latencyBudget: { p99Ms: 250 } });
    expect(budget('off')).toEqual({ latencyBudget: { off: true } });
    expect(() => parseCli(['--preset', 'dormant', '--latency-budget', '300'], env)).toThrow(
      /--latency-budget must be a ratio of the event p99 before the scan \(e\.g\. 1\.2x\), a p99 in milliseconds \(e\.g\. 300ms\) or off, got "300"/,
    );
    expect(() => parseCli(['--preset', 'dormant', '--latency-budget', '0.5x'], env)).toThrow(
      '--latency-budget must be a ratio from 1.05x to 100x, got "0.5x"',
    );
  });

  it('is the same request as `scans create`, flags before or after the words', () => {
    const legacy = parseCli(['--url', 'http://s:1', '--preset', 'dormant', '--no-follow'], env);
    expect(parseCli(['scans', 'create', '--url', 'http://s:1', '--preset', 'dormant', '--no-follow'], env)).toEqual(
      legacy,
    );
    expect(parseCli(['--url', 'http://s:1', 'scans', '--preset', 'dormant', 'create', '--no-follow'], env)).toEqual(
      legacy,
    );
    expect(legacy).toMatchObject({ request: { follow: false } });
  });

  it('reads a scan file, and flags override its options', () => {
    const file = JSON.stringify({
      condition: { field: 'a', op: 'exists' },
      action: { delete: true },
      options: { rate: 5, maxCommands: 9 },
    });
    const parsed = parseCli(['--file', 'scan.json', '--rate', '7', '--url', 'http://scanner:8081/'], env, () => file);
    expect(parsed).toMatchObject({
      url: 'http://scanner:8081',
      request: {
        body: {
          condition: { field: 'a', op: 'exists' },
          action: { delete: true },
          options: { rate: 7, maxCommands: 9 },
        },
      },
    });
  });

  it('takes the rule from --condition and --action, and asOf as ISO or epoch ms', () => {
    expect(
      request([
        '--condition',
        '{"field":"a","op":"exists"}',
        '--action',
        '{"unset":["a"]}',
        '--as-of',
        '1700000000000',
      ]),
    ).toMatchObject({
      body: { condition: { field: 'a', op: 'exists' }, action: { unset: ['a'] }, asOf: 1_700_000_000_000 },
    });
  });

  it.each([
    [['--preset', 'dormant', '--bogus'], /Unknown option '--bogus'/],
    [['--rate', '5'], /exactly one of --preset, --file, or --condition with --action/],
    [['--preset', 'dormant', '--file', 'x.json'], /exactly one of/],
    [['--condition', '{}'], /--condition and --action go together/],
    [['--condition', '{nope', '--action', '{}'], /--condition: not valid JSON/],
    [['--preset', 'weekly'], /unknown --preset "weekly"/],
    [['--preset', 'dormant', '--rate', 'fast'], /--rate must be a number of at least 0, got "fast"/],
    [['--preset', 'dormant', '--batch-size', '2.5'], /--batch-size must be an integer of at least 1/],
    [['--preset', 'dormant', '--max-commands', '0'], /--max-commands must be an integer of at least 1/],
    [['--file', 'missing.json'], /--file missing.json: ENOENT/],
    [['--preset', 'dormant', '--url', 'localhost:8081'], /--url must be an http\(s\) URL/],
    [['--preset', 'dormant', '--limit', '5'], /--limit is not a flag of "scans create"/],
  ])('rejects %j', (argv, message) => {
    expect(usageError(argv)).toMatch(message);
  });
});

describe('CLI arguments: nouns and verbs', () => {
  it.each<[string[], CliRequest]>([
    [['scans', 'list'], { command: 'scans list' }],
    [['scans', 'list', '--limit', '5', '--offset', '10'], { command: 'scans list', limit: 5, offset: 10 }],
    [['scans', 'get', 'abc'], { command: 'scans get', id: 'abc' }],
    [['scans', 'cancel', 'abc'], { command: 'scans cancel', id: 'abc' }],
    [['scans', 'follow', 'abc'], { command: 'scans follow', id: 'abc' }],
    [['schedules', 'list'], { command: 'schedules list' }],
    [['schedules', 'get', 's1'], { command: 'schedules get', id: 's1' }],
    [['schedules', 'pause', 's1'], { command: 'schedules pause', id: 's1' }],
    [['schedules', 'resume', 's1'], { command: 'schedules resume', id: 's1' }],
    [['schedules', 'delete', 's1'], { command: 'schedules delete', id: 's1' }],
  ])('%j', (argv, expected) => {
    expect(request(argv)).toEqual(expected);
  });

  it('schedules create: name, one of interval or cron, time zone and the template from the same rule flags', () => {
    expect(
      request([
        'schedules',
        'create',
        '--name',
        'nightly',
        '--cron',
        '0 3 * * *',
        '--time-zone',
        'Europe/Berlin',
        '--preset',
        'dormant',
        '--rate',
        '500',
      ]),
    ).toEqual({
      command: 'schedules create',
      body: {
        name: 'nightly',
        cron: '0 3 * * *',
        timeZone: 'Europe/Berlin',
        template: { ...DORMANCY_SWEEP, options: { rate: 500 } },
      },
    });
    expect(request(['schedules', 'create', '--name', 'n', '--interval', 'PT1H', '--preset', 'dormant'])).toEqual({
      command: 'schedules create',
      body: { name: 'n', interval: 'PT1H', template: { ...DORMANCY_SWEEP } },
    });
  });

  it('--json, and the URL from STATE_RELAY_URL unless --url is given', () => {
    const fromEnv = parseCli(['scans', 'list', '--json'], { ...env, STATE_RELAY_URL: 'https://scanner.example:8443/' });
    expect(fromEnv).toMatchObject({ kind: 'run', json: true, url: 'https://scanner.example:8443' });
    const flag = parseCli(['scans', 'list', '--url', 'http://other:1'], { ...env, STATE_RELAY_URL: 'http://env:1' });
    expect(flag).toMatchObject({ json: false, url: 'http://other:1' });
    expect(usageError(['scans', 'list'], {}, { ...env, STATE_RELAY_URL: 'scanner:8081' })).toMatch(
      /STATE_RELAY_URL must be an http\(s\) URL/,
    );
  });

  it.each([
    [['scan', 'list'], /unknown command "scan"; the commands are scans and schedules/],
    [['scans'], /scans needs a verb: list, get, create, cancel, follow/],
    [['scans', 'remove', 'x'], /unknown verb "remove" of scans; its verbs are list, get, create, cancel, follow/],
    [['scans', 'get'], /"scans get" takes ID, got none/],
    [['scans', 'get', 'a', 'b'], /"scans get" takes ID, got "a b"/],
    [['scans', 'list', 'x'], /"scans list" takes no arguments, got "x"/],
    [['scans', 'get', 'a', '--rate', '5'], /--rate is not a flag of "scans get" \(see: state-relay scans get --help\)/],
    [['scans', 'list', '--limit', '0'], /--limit must be an integer of at least 1/],
    [['scans', 'list', '--offset=-1'], /--offset must be an integer of at least 0/],
    [['schedules', 'create', '--interval', 'PT1H', '--preset', 'dormant'], /--name is required/],
    [['schedules', 'create', '--name', 'n', '--preset', 'dormant'], /exactly one of --interval and --cron/],
    [
      ['schedules', 'create', '--name', 'n', '--interval', 'PT1H', '--cron', '@daily', '--preset', 'dormant'],
      /exactly one of --interval and --cron/,
    ],
    [['schedules', 'create', '--name', 'n', '--interval', 'PT1H'], /exactly one of --preset, --file/],
    [
      ['schedules', 'create', '--name', 'n', '--interval', 'PT1H', '--preset', 'dormant', '--as-of', '0'],
      /--as-of is not a flag of "schedules create"/,
    ],
    [['schedules', 'pause', 's', '--json=yes'], /--json/],
  ])('rejects %j', (argv, message) => {
    expect(usageError(argv)).toMatch(message);
  });
});

describe('CLI arguments: the token', () => {
  it('needs a token, and never quotes one', () => {
    expect(() => parseCli(['--preset', 'dormant'], {})).toThrow(
      /a token is required: set env STATE_RELAY_API_TOKEN, or give --token-file PATH/,
    );
    expect(() => parseCli(['schedules', 'list'], {})).toThrow(/a token is required/);
    expect(usageError(['--preset', 'dormant', '--rate', 'x', '--token', 'secret-token-value'])).not.toContain(
      'secret-token-value',
    );
  });

  it('reads the token from --token-file (trimmed), ahead of the environment', () => {
    const files = { '/run/token': 'file-token-0123456789\n' };
    const parsed = parseCli(['scans', 'list', '--token-file', '/run/token'], env, (p) => files[p as '/run/token']);
    expect(parsed).toMatchObject({ token: 'file-token-0123456789', warnings: [] });
  });

  it.each([
    [{ 'empty.txt': '  \n' }, ['--token-file', 'empty.txt'], /--token-file empty.txt is empty/],
    [{}, ['--token-file', 'gone.txt'], /--token-file gone.txt: ENOENT/],
    [{ 'two.txt': 'secret-a secret-b\n' }, ['--token-file', 'two.txt'], /must hold the token alone/],
    [{ 't.txt': 'secret-a' }, ['--token-file', 't.txt', '--token', 'secret-b'], /one of --token-file and --token/],
  ])('rejects a bad --token-file (%j %j) without quoting its content', (files, argv, message) => {
    const text = usageError(['--preset', 'dormant', ...argv], files);
    expect(text).toMatch(message);
    expect(text).not.toMatch(/secret-/);
  });

  it('still takes --token, with a warning that says why and what to use instead', () => {
    const parsed = parseCli(['--preset', 'dormant', '--token', 'flag-token-0123456789'], env);
    expect(parsed).toMatchObject({ token: 'flag-token-0123456789', warnings: [TOKEN_FLAG_WARNING] });
    expect(TOKEN_FLAG_WARNING).toMatch(/STATE_RELAY_API_TOKEN or --token-file/);
    expect(TOKEN_FLAG_WARNING).not.toContain('flag-token');
  });
});

describe('CLI arguments: --help and --version', () => {
  const help = (argv: string[]) => {
    const parsed: Invocation = parseCli(argv, {});
    if (parsed.kind !== 'help') throw new Error(`expected help, got ${parsed.kind}`);
    return parsed.text;
  };

  it('--help alone: every command, the shared flags, the exit codes; no token needed', () => {
    const text = help(['--help']);
    expect(text).toBe(mainHelp());
    for (const [noun, verbs] of Object.entries(NOUNS))
      for (const verb of Object.keys(verbs)) expect(text).toContain(`${noun} ${verb}`);
    expect(text).toContain('STATE_RELAY_API_TOKEN');
    expect(text).toContain('--token-file PATH');
    expect(text).toMatch(/--token TOKEN\s+deprecated/);
    for (const code of ['0', '1', '2', '3', '4', '130']) expect(text).toMatch(new RegExp(`^  ${code} +\\S`, 'm'));
    for (const line of text.split('\n').filter((l) => l.includes('pnpm scan'))) expect(line).not.toContain('--token ');
  });

  it('--help per noun and per verb, each listing every flag the verb takes', () => {
    expect(help(['scans', '--help'])).toBe(nounHelp('scans'));
    for (const [noun, verbs] of Object.entries(NOUNS) as Array<
      [keyof typeof NOUNS, Record<string, { flags: readonly string[] }>]
    >) {
      for (const [verb, spec] of Object.entries(verbs)) {
        const text = help([noun, verb, '--help']);
        expect(text).toBe(verbHelp(noun, verb, spec as never));
        for (const flag of [...spec.flags, 'url', 'token-file', 'json']) expect(text).toContain(`--${flag}`);
      }
    }
  });

  it('every flag has help', () => {
    for (const spec of Object.values(FLAGS)) expect(spec.help.length).toBeGreaterThan(5);
  });

  it('--version needs no token', () => {
    expect(parseCli(['--version'], {})).toEqual({ kind: 'version' });
  });
});
