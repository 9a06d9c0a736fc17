import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import type { ScanView } from '../src/scans/scan-view';

// The CLI as a child process, its stdout a pipe (no terminal), against a small fake of the scan
// API that records what it was sent. Runs the built CLI (dist/, made by `tsc -b`).
const CLI = resolve(__dirname, '../dist/cli/main.js');
const TOKEN = 'cli-process-token-0123456789abcdef';
/** Secret-looking text that is not JSON: what a token file passed as --file holds. */
const SECRET = 'sEcReT-9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const POLLS_UNTIL_DONE = 10;

function scanAt(poll: number): ScanView {
  const done = poll >= POLLS_UNTIL_DONE;
  const results = Object.fromEntries(COMMAND_OUTCOMES.map((o) => [o, 0])) as ScanView['counts']['results'];
  const emitted = Math.min(poll, POLLS_UNTIL_DONE) * 10;
  return {
    id: 'scan-1',
    url: '/scans/scan-1',
    status: done ? 'completed' : 'running',
    phase: done ? null : 'walking',
    condition: {},
    action: {},
    options: {},
    asOf: '2026-11-01T00:00:00.000Z',
    counts: { scanned: emitted * 3, matched: emitted, emitted, pending: 0, results: { ...results, applied: emitted } },
    progress: { replicaRows: 300, fraction: done ? 1 : poll / POLLS_UNTIL_DONE, etaSeconds: null, eta: null },
    pace: null,
    backoffSeconds: 0,
    replicaLag: { total: 0, partitions: [] },
    createdAt: '2026-11-01T00:00:00.000Z',
    startedAt: '2026-11-01T00:00:00.000Z',
    finishedAt: done ? '2026-11-01T00:00:05.000Z' : null,
    error: null,
  };
}

/** Schedules as a scanner from before names were checked (or a hostile one) could answer: issue 34 item 7. */
const HOSTILE_SCHEDULES = ['nightly', '\u001b[1A\u001b[2Kinnocent', 'forged\nrow'].map((name, i) => ({
  id: `sch-${i + 1}`,
  url: `/schedules/sch-${i + 1}`,
  name,
  interval: 'PT1H',
  timeZone: 'UTC',
  paused: false,
  template: { condition: { field: 'a', op: 'exists' }, action: { delete: true } },
  createdAt: '2026-11-01T00:00:00.000Z',
  lastRunAt: null,
  nextRunAt: '2026-11-01T01:00:00.000Z',
  lastRuns: [],
}));

describe('the scan CLI as a child process, without a terminal', () => {
  // A child process may take seconds to start on a loaded machine: past jest's 5 s default.
  jest.setTimeout(30_000);

  let server: Server;
  let url: string;
  let dir: string;
  let polls = 0;
  const authorizations: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (pnpm exec tsc -b tsconfig.json)`);
    dir = mkdtempSync(join(tmpdir(), 'cli-process-'));
    server = createServer((req, res) => {
      authorizations.push(req.headers.authorization ?? '');
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      req.resume();
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        return json(401, { error: 'unauthorized', message: 'the bearer token is not valid' });
      }
      if (req.method === 'POST' && req.url === '/scans') {
        polls = 0;
        return json(202, { scan: scanAt(0), url: '/scans/scan-1' });
      }
      if (req.method === 'GET' && req.url === '/scans/scan-1') return json(200, scanAt(++polls));
      if (req.method === 'GET' && req.url === '/schedules') return json(200, { schedules: HOSTILE_SCHEDULES });
      return json(404, { error: 'route_not_found', message: 'no route' });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => void authorizations.splice(0));

  function run(args: string[], env: Record<string, string> = {}) {
    const child = spawn(process.execPath, [CLI, '--url', url, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((res) =>
      child.on('close', (code) => res({ code, stdout, stderr })),
    );
  }

  it('takes the token from STATE_RELAY_API_TOKEN and prints one progress line per update, each on its own line', async () => {
    const { code, stdout, stderr } = await run(['--preset', 'dormant'], { STATE_RELAY_API_TOKEN: TOKEN });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).not.toMatch(/[\r\x1b]/);
    const progress = stdout.split('\n').filter((l) => l.startsWith('['));
    // Every line is one whole update; fewer lines than polls: at most one per 2 s, plus the last.
    for (const line of progress) expect(line).toMatch(/^\[[#-]+\]\s+\d+% \S+ scanned \d+\/300 matched \d+ emitted \d+/);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.length).toBeLessThan(polls);
    expect(progress.at(-1)).toMatch(/100% completed scanned 300\/300/);
    expect(stdout).toMatch(/scan scan-1 completed\n/);
    expect(stdout).toMatch(/applied\s+100/);
    expect(new Set(authorizations)).toEqual(new Set([`Bearer ${TOKEN}`]));
    expect(stdout).not.toContain(TOKEN);
  }, 30_000);

  it('schedules list: a name holding escape sequences or a newline neither hides nor forges a row', async () => {
    const { code, stdout, stderr } = await run(['schedules', 'list'], { STATE_RELAY_API_TOKEN: TOKEN });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/u);
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toMatch(/^sch-2\s+\\u001b\[1A\\u001b\[2Kinnocent\s+every PT1H/);
    expect(lines[3]).toMatch(/^sch-3\s+forged\\u000arow\s+every PT1H/);
  });

  it('a URL with credentials is never echoed with them (issue 34 item 8)', async () => {
    const child = spawn(process.execPath, [CLI, '--url', 'http://admin:hunter2-secret@127.0.0.1:9', 'scans', 'list'], {
      env: { PATH: process.env.PATH ?? '', STATE_RELAY_API_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const code = await new Promise<number | null>((res) => child.on('close', (c) => res(c)));
    expect(code).not.toBe(0);
    expect(output).toContain('http://***@127.0.0.1:9');
    expect(output).not.toMatch(/hunter2|admin/);
    const bad = await run(['scans', 'list', '--url', 'ftp://admin:hunter2-secret@host'], {
      STATE_RELAY_API_TOKEN: TOKEN,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ftp://***@host');
    expect(bad.stderr).not.toContain('hunter2');
  });

  it('takes the token from --token-file, quietly', async () => {
    const file = join(dir, 'api-token');
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    const { code, stdout, stderr } = await run(['--token-file', file, '--preset', 'dormant', '--no-follow']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^scan scan-1 created/);
    expect(authorizations).toEqual([`Bearer ${TOKEN}`]);
  });

  it('still takes --token, warning on stderr without echoing it', async () => {
    const { code, stdout, stderr } = await run(['--token', TOKEN, '--preset', 'dormant', '--no-follow']);
    expect(code).toBe(0);
    expect(stderr).toMatch(
      /^state-relay: warning: --token puts the token on the command line.*STATE_RELAY_API_TOKEN or --token-file/,
    );
    expect(stderr + stdout).not.toContain(TOKEN);
    expect(authorizations).toEqual([`Bearer ${TOKEN}`]);
  });

  it('a refused token: exit 3 with the API message, and the token in no output', async () => {
    const wrong = `${TOKEN}-wrong`;
    const { code, stdout, stderr } = await run(['--preset', 'dormant'], { STATE_RELAY_API_TOKEN: wrong });
    expect(code).toBe(3);
    expect(stderr).toBe('state-relay: 401 unauthorized: the bearer token is not valid\n');
    expect(stderr + stdout).not.toContain(TOKEN);
  });

  it('a --file that is not JSON (the token file by mistake): exit 2, the file and place named, its content never', async () => {
    const file = join(dir, 'api-token-not-json');
    writeFileSync(file, `${SECRET}\n`, { mode: 0o600 });
    const { code, stdout, stderr } = await run(['--file', file], { STATE_RELAY_API_TOKEN: TOKEN });
    expect(code).toBe(2);
    expect(stderr).toContain(
      `state-relay: --file ${file}: not valid JSON at line 1, column 1: expected a JSON value\n`,
    );
    expect(stderr + stdout).not.toContain(SECRET.slice(0, 6));
    expect(authorizations).toEqual([]);
  });

  it('a --condition that is not JSON: exit 2, the place named, the argument never quoted', async () => {
    const args = ['--condition', `{"field": ${SECRET}}`, '--action', '{}'];
    const { code, stdout, stderr } = await run(args, { STATE_RELAY_API_TOKEN: TOKEN });
    expect(code).toBe(2);
    expect(stderr).toContain('state-relay: --condition: not valid JSON at line 1, column 11: expected a JSON value\n');
    expect(stderr + stdout).not.toContain(SECRET.slice(0, 6));
  });

  it('--help: the token from the environment or a file', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('STATE_RELAY_API_TOKEN=$(cat .state-relay/api-token) pnpm scan --preset dormant');
    expect(stdout).toContain('pnpm scan --token-file .state-relay/api-token --preset dormant');
  });
});
