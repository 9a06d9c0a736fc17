import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import { parseCli, UsageError } from '../src/cli/args';
import { formatSeconds, progressLine, summary } from '../src/cli/progress';
import type { ScanView } from '../src/scan-view';

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
    const parsed = parseCli(
      ['--file', 'scan.json', '--rate', '7', '--url', 'http://scanner:8081/', '--token', 't'],
      env,
      () => file,
    );
    expect(parsed).toMatchObject({
      url: 'http://scanner:8081',
      token: 't',
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
    expect(() => parseCli(['--preset', 'dormant'], {})).toThrow(/a token is required/);
    expect(usageError(['--preset', 'dormant', '--rate', 'x', '--token', 'secret-token-value'])).not.toContain(
      'secret-token-value',
    );
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

  it('formats durations', () => {
    expect(formatSeconds(4.2)).toBe('5s');
    expect(formatSeconds(3_700)).toBe('1h01m');
  });
});
