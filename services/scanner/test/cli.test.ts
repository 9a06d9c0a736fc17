import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import { parseCli, TOKEN_FLAG_WARNING, UsageError, USAGE } from '../src/cli/args';
import { formatSeconds, ProgressReporter, progressLine, summary } from '../src/cli/progress';
import type { ScanView } from '../src/scans/scan-view';

const env = { STATE_RELAY_API_TOKEN: 'env-token-0123456789' };

function usageError(argv: string[], files: Record<string, string> = {}): string {
  try {
    parseCli(argv, env, (p) => {
      if (!(p in files)) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return files[p]!;
    });
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error('expected a usage error');
}

describe('scan CLI arguments', () => {
  it('builds the canonical sweep from --preset dormant, with the token from the environment', () => {
    expect(parseCli(['--preset', 'dormant', '--rate', '50', '--dry-run'], env)).toEqual({
      url: 'http://127.0.0.1:8081',
      token: 'env-token-0123456789',
      warnings: [],
      body: { ...DORMANCY_SWEEP, options: { rate: 50, dryRun: true } },
      follow: true,
    });
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
      token: 'env-token-0123456789',
      body: { condition: { field: 'a', op: 'exists' }, action: { delete: true }, options: { rate: 7, maxCommands: 9 } },
    });
  });

  it('takes the rule from --condition and --action, and asOf as ISO or epoch ms', () => {
    const parsed = parseCli(
      ['--condition', '{"field":"a","op":"exists"}', '--action', '{"unset":["a"]}', '--as-of', '1700000000000'],
      env,
    );
    expect(parsed).toMatchObject({
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
  ])('rejects %j', (argv, message) => {
    expect(usageError(argv)).toMatch(message);
  });

  it('needs a token, and never quotes one', () => {
    expect(() => parseCli(['--preset', 'dormant'], {})).toThrow(
      /a token is required: set env STATE_RELAY_API_TOKEN, or give --token-file PATH/,
    );
    expect(usageError(['--preset', 'dormant', '--rate', 'x', '--token', 'secret-token-value'])).not.toContain(
      'secret-token-value',
    );
  });

  it('reads the token from --token-file (trimmed), ahead of the environment', () => {
    const files = { '/run/token': 'file-token-0123456789\n' };
    const parsed = parseCli(
      ['--preset', 'dormant', '--token-file', '/run/token'],
      env,
      (p) => files[p as '/run/token'],
    );
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

  it('--help shows the environment and the token file, not a token on the command line', () => {
    expect(parseCli(['--help'], {})).toEqual({ help: true });
    expect(USAGE).toContain('STATE_RELAY_API_TOKEN');
    expect(USAGE).toContain('--token-file PATH');
    expect(USAGE).toMatch(/--token TOKEN\s+deprecated/);
    for (const line of USAGE.split('\n').filter((l) => l.includes('pnpm scan'))) expect(line).not.toContain('--token ');
  });
});

describe('scan CLI output', () => {
  const results = Object.fromEntries(COMMAND_OUTCOMES.map((o) => [o, 0])) as ScanView['counts']['results'];
  const view: ScanView = {
    id: 's1',
    url: '/scans/s1',
    status: 'running',
    phase: 'walking',
    condition: {},
    action: {},
    options: {},
    asOf: '',
    counts: {
      scanned: 500,
      matched: 150,
      emitted: 150,
      pending: 20,
      results: { ...results, applied: 120, condition_false: 10 },
    },
    progress: { replicaRows: 1000, fraction: 0.5, etaSeconds: 75, eta: null },
    backoffSeconds: 0,
    replicaLag: { total: 0, partitions: [] },
    createdAt: '',
    startedAt: null,
    finishedAt: null,
    error: null,
  };

  it('draws the walk as a bar with the counts and the ETA', () => {
    expect(progressLine(view, 10)).toBe(
      '[#####-----]  50% running:walking scanned 500/1000 matched 150 emitted 150 awaiting 20 eta 1m15s',
    );
  });

  it('ends with every outcome count', () => {
    const text = summary({ ...view, status: 'completed', phase: null });
    expect(text).toContain('scan s1 completed');
    expect(text).toMatch(/applied\s+120/);
    expect(text).toMatch(/condition_false\s+10/);
    expect(text).toMatch(/version_conflict\s+0/);
  });

  it('without a terminal: one line per update, at most one per interval, and always the final one', () => {
    let now = 0;
    const written: string[] = [];
    const progress = new ProgressReporter({ write: (t) => void written.push(t), isTTY: false }, 2_000, () => now);
    for (const [at, scanned] of [
      [0, 100],
      [500, 200],
      [1_900, 300],
      [2_000, 400],
      [3_000, 500],
    ] as const) {
      now = at;
      progress.update({ ...view, counts: { ...view.counts, scanned } });
    }
    now = 3_100;
    progress.update({ ...view, status: 'completed', phase: null, counts: { ...view.counts, scanned: 1000 } });
    progress.end();
    expect(written.map((t) => t.match(/scanned (\d+)/)![1])).toEqual(['100', '400', '1000']);
    for (const t of written) expect(t).toMatch(/^[^\r\x1b\n]+\n$/);
  });

  it('on a terminal: the line is redrawn in place and ended once', () => {
    const written: string[] = [];
    const progress = new ProgressReporter({ write: (t) => void written.push(t), isTTY: true, columns: 40 });
    progress.update(view);
    progress.update(view);
    progress.end();
    expect(written).toHaveLength(3);
    expect(written[0]).toMatch(/^\r\x1b\[2K\[/);
    expect(written[0]!.length).toBeLessThanOrEqual('\r\x1b[2K'.length + 39);
    expect(written[2]).toBe('\n');
  });

  it('formats durations', () => {
    expect(formatSeconds(4.2)).toBe('5s');
    expect(formatSeconds(3_700)).toBe('1h01m');
  });
});
