import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { accountsOracle } from '@state-relay/accounts/testing';
import { evaluateCondition } from '@state-relay/rules';
import { kafkaClient, testBrokers, waitUntil } from '@state-relay/testkit';
import { demoEvents, newDeployment, ProcessorProcess, produceEvents, waitCaughtUp } from '../../processor/test/harness';
import type { ScanView } from '../src/scans/scan-view';
import type { ScheduleView } from '../src/schedules/schedule-service';
import { InProcessScanner, TOKEN } from './scanner-harness';

// The built CLI (`state-relay`, dist/cli/main.js) as a child process against a real scanner, a real
// processor and a real broker: every verb, --json, the exit codes the scanner README documents,
// Ctrl-C while following, and the token in no output.

const CLI = resolve(__dirname, '../dist/cli/main.js');
const BIN = resolve(__dirname, '../../../node_modules/.bin/state-relay');
const AS_OF = '2026-11-01T00:00:00.000Z'; // demoEvents' "now"
const ACCOUNTS = 200;
/** Matches every account, and sets a field no rule reads: a scan to cancel or to leave running. */
const EVERY_ACCOUNT = ['--condition', '{"field":"status","op":"exists"}', '--action', '{"set":{"meta.cliTest":true}}'];

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

describe('the state-relay CLI against a started stack', () => {
  const events = demoEvents(ACCOUNTS, 3, 24);
  const outputs: string[] = []; // every run's stdout and stderr, for the token check
  let proc: ProcessorProcess;
  let scanner: InProcessScanner;
  let dir: string;
  let env: Record<string, string>;

  /** Starts the CLI; `done` resolves when it exits. */
  function start(args: string[], extraEnv: Record<string, string> = {}, program = CLI) {
    const child = spawn(program === CLI ? process.execPath : program, program === CLI ? [CLI, ...args] : args, {
      env: { ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run: Run = { code: null, signal: null, stdout: '', stderr: '' };
    child.stdout.on('data', (b: Buffer) => (run.stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (run.stderr += b.toString()));
    const done = new Promise<Run>((res) =>
      child.on('close', (code, signal) => {
        Object.assign(run, { code, signal });
        outputs.push(run.stdout, run.stderr);
        res(run);
      }),
    );
    return { child, run, done };
  }
  const cli = (args: string[], extraEnv?: Record<string, string>) => start(args, extraEnv).done;
  const json = <T>(run: Run): T => JSON.parse(run.stdout) as T;
  const createdId = (text: string) => /scan (\S+) created/.exec(text)?.[1];

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (pnpm exec tsc -b tsconfig.json)`);
    const d = newDeployment(testBrokers(), 3);
    proc = new ProcessorProcess(d);
    await proc.start();
    await proc.waitReady();
    const kafka = kafkaClient(testBrokers());
    await produceEvents(kafka, d.eventsTopic, events);
    await waitCaughtUp(kafka, d.appId, d.eventsTopic);
    scanner = await new InProcessScanner().start(d);
    dir = mkdtempSync(join(tmpdir(), 'cli-itest-'));
    writeFileSync(join(dir, 'api-token'), `${TOKEN}\n`, { mode: 0o600 });
    env = { PATH: process.env.PATH ?? '', STATE_RELAY_URL: scanner.api.url, STATE_RELAY_API_TOKEN: TOKEN };
  }, 180_000);

  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await scanner?.stop();
    await proc?.kill();
    proc?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  let sweepId: string;

  it('pnpm scan --preset dormant (no command: scans create) follows the sweep to completion, exit 0', async () => {
    const idle = [...accountsOracle(events)].filter(([, v]) =>
      evaluateCondition(DORMANCY_SWEEP.condition, v, { asOf: Date.parse(AS_OF) }),
    ).length;
    expect(idle).toBeGreaterThan(20);
    // The token from a file, the URL from the flag (the environment's is not used then).
    const run = await cli(
      ['--preset', 'dormant', '--as-of', AS_OF, '--token-file', join(dir, 'api-token'), '--url', scanner.api.url],
      { STATE_RELAY_API_TOKEN: '', STATE_RELAY_URL: 'http://127.0.0.1:9' },
    );
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    sweepId = createdId(run.stdout)!;
    expect(run.stdout).toMatch(
      new RegExp(`^scan ${sweepId} created \\(${scanner.api.url}/scans/${sweepId}\\), asOf ${AS_OF}\n`),
    );
    expect(run.stdout).toMatch(/^\[[#-]+\]\s+\d+% /m); // progress, one whole line per update
    expect(run.stdout).toContain(`scan ${sweepId} completed\n`);
    expect(run.stdout).toMatch(new RegExp(`matched ${idle}, emitted ${idle}, without result 0`));
    expect(run.stdout).toMatch(new RegExp(`^  applied\\s+${idle}$`, 'm'));
    expect(await scanner.api.get(sweepId)).toMatchObject({ status: 'completed', counts: { emitted: idle } });
  });

  let dryRun: ScanView;

  it('scans create --json: one JSON document on stdout (the finished scan), progress on stderr', async () => {
    const run = await cli(['scans', 'create', '--preset', 'dormant', '--as-of', AS_OF, '--dry-run', '--json']);
    expect(run.code).toBe(0);
    dryRun = json<ScanView>(run);
    expect(dryRun).toMatchObject({
      status: 'completed',
      options: { dryRun: true },
      counts: { scanned: ACCOUNTS, matched: 0 },
    });
    expect(run.stderr).toContain(`scan ${dryRun.id} created`);
    expect(run.stderr).toMatch(/^\[[#-]+\] 100% completed/m);
  });

  it('scans list and scans get, as text and as --json', async () => {
    const list = await cli(['scans', 'list']);
    expect(list.code).toBe(0);
    const lines = list.stdout.split('\n');
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+CREATED\s+SCANNED\s+MATCHED\s+EMITTED\s+PENDING$/);
    expect(lines[1]).toMatch(new RegExp(`^${dryRun.id}\\s+completed\\s.*dry run$`)); // newest first
    expect(lines[2]).toMatch(new RegExp(`^${sweepId}\\s+completed\\s`));
    expect(list.stdout).toContain('scans 1-2 of 2, newest first\n');

    const page = await cli(['scans', 'list', '--limit', '1', '--offset', '1', '--json']);
    expect(page.code).toBe(0);
    const doc = json<{ scans: ScanView[]; total: number; limit: number; offset: number }>(page);
    expect({ ids: doc.scans.map((s) => s.id), total: doc.total, limit: doc.limit, offset: doc.offset }).toEqual({
      ids: [sweepId],
      total: 2,
      limit: 1,
      offset: 1,
    });

    const get = await cli(['scans', 'get', sweepId]);
    expect(get.code).toBe(0);
    expect(get.stdout).toMatch(new RegExp(`^scan ${sweepId} completed\n`));
    expect(get.stdout).toContain(`  asOf      ${AS_OF}`);
    const getJson = await cli(['scans', 'get', sweepId, '--json']);
    expect(json<ScanView>(getJson)).toEqual(await scanner.api.get(sweepId));
  });

  it('an unknown scan id: exit 4 with the API code and message, nothing on stdout', async () => {
    for (const args of [
      ['scans', 'get', 'no-such-scan'],
      ['scans', 'get', 'no-such-scan', '--json'],
      ['scans', 'cancel', 'no-such-scan'],
      ['scans', 'follow', 'no-such-scan'],
    ]) {
      const run = await cli(args);
      expect({ args, code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
        args,
        code: 4,
        stdout: '',
        stderr: 'state-relay: 404 scan_not_found: no scan with id "no-such-scan"\n',
      });
    }
  });

  it('Ctrl-C while following: exit 130, the scan goes on, and stderr says how to cancel it', async () => {
    const { child, run, done } = start([...EVERY_ACCOUNT, '--rate', '2']);
    await waitUntil(() => createdId(run.stdout) !== undefined && /^\[/m.test(run.stdout), {
      timeoutMs: 30_000,
      intervalMs: 50,
      message: 'the CLI to create the scan and show its progress',
    });
    const id = createdId(run.stdout)!;
    try {
      child.kill('SIGINT');
      const ended = await done;
      expect({ code: ended.code, signal: ended.signal }).toEqual({ code: 130, signal: null });
      // The URL came from STATE_RELAY_URL; the commands it prints name it, so they work from any shell.
      expect(ended.stderr).toBe(
        [
          `stopped following; scan ${id} goes on (${/goes on \((\w+)\)/.exec(ended.stderr)?.[1]}).`,
          `  cancel it:        state-relay scans cancel ${id} --url ${scanner.api.url}`,
          `  follow it again:  state-relay scans follow ${id} --url ${scanner.api.url}`,
          '',
        ].join('\n'),
      );
      expect(ended.stderr).toMatch(/goes on \((pending|running)\)/);
      expect(['pending', 'running']).toContain((await scanner.api.get(id)).status);

      // Following again and Ctrl-C with --json: the last state read is the one document on stdout.
      const again = start(['scans', 'follow', id, '--json']);
      await waitUntil(() => /^\[/m.test(again.run.stderr), { timeoutMs: 30_000, intervalMs: 50, message: 'progress' });
      again.child.kill('SIGINT');
      const second = await again.done;
      expect(second.code).toBe(130);
      expect(json<ScanView>(second).id).toBe(id);
      expect(['pending', 'running']).toContain(json<ScanView>(second).status);
      expect(second.stderr).toContain(`state-relay scans cancel ${id}`);

      // What it said to run cancels it.
      const cancel = await cli(['scans', 'cancel', id, '--url', scanner.api.url]);
      expect(cancel.code).toBe(0);
      expect(cancel.stdout).toMatch(new RegExp(`^scan ${id} cancelled`));
      expect((await scanner.api.get(id)).status).toBe('cancelled');
    } finally {
      await scanner.api.call('POST', `/scans/${id}/cancel`); // scans run one at a time: never leave it running
    }
  });

  it('scans cancel of a slow scan (--no-follow --json), then cancel again (409: exit 3), then follow it (cancelled: exit 1)', async () => {
    const created = await cli(['scans', 'create', ...EVERY_ACCOUNT, '--rate', '1', '--no-follow', '--json']);
    expect(created.code).toBe(0);
    const scan = json<ScanView>(created);
    expect(['pending', 'running']).toContain(scan.status);
    expect(created.stderr).toContain(`scan ${scan.id} created`);

    cleanups.push(() => scanner.api.call('POST', `/scans/${scan.id}/cancel`));
    const cancel = await cli(['scans', 'cancel', scan.id, '--json']);
    expect(cancel.code).toBe(0);
    expect(json<ScanView>(cancel)).toMatchObject({ id: scan.id, status: 'cancelled' });

    const twice = await cli(['scans', 'cancel', scan.id]);
    expect(twice.code).toBe(3);
    expect(twice.stderr).toMatch(/^state-relay: 409 scan_finished: /);

    await scanner.api.waitFor(scan.id, (s) => s.counts.pending === 0, 'results of the commands sent before the cancel');
    const follow = await cli(['scans', 'follow', scan.id]);
    expect(follow.code).toBe(1);
    expect(follow.stdout).toContain(`scan ${scan.id} cancelled\n`);
  });

  it('schedules create, list, get, pause, resume, delete; a deleted one is not found (exit 4)', async () => {
    const created = await cli([
      'schedules',
      'create',
      '--name',
      'cli itest',
      '--interval',
      'PT1H',
      '--preset',
      'dormant',
      '--dry-run',
      '--json',
    ]);
    expect(created.code).toBe(0);
    const schedule = json<ScheduleView>(created);
    expect(schedule).toMatchObject({
      name: 'cli itest',
      interval: 'PT1H',
      timeZone: 'UTC',
      paused: false,
      template: { ...DORMANCY_SWEEP, options: { dryRun: true } },
    });
    const { id } = schedule;
    try {
      const list = await cli(['schedules', 'list']);
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(new RegExp(`^${id}\\s+cli itest\\s+every PT1H \\(UTC\\)\\s+active\\s`, 'm'));
      const listJson = await cli(['schedules', 'list', '--json']);
      expect(json<{ schedules: ScheduleView[] }>(listJson).schedules.map((s) => s.id)).toEqual([id]);

      const get = await cli(['schedules', 'get', id]);
      expect(get.code).toBe(0);
      expect(get.stdout).toMatch(new RegExp(`^schedule ${id} "cli itest" active\n`));

      const pause = await cli(['schedules', 'pause', id]);
      expect({ code: pause.code, stdout: pause.stdout }).toEqual({ code: 0, stdout: `schedule ${id} paused\n` });
      expect((await scanner.api.call('GET', `/schedules/${id}`)).json).toMatchObject({ paused: true, nextRunAt: null });

      const resume = await cli(['schedules', 'resume', id, '--json']);
      expect(resume.code).toBe(0);
      expect(json<ScheduleView>(resume)).toMatchObject({ id, paused: false, nextRunAt: expect.any(String) });

      const del = await cli(['schedules', 'delete', id, '--json']);
      expect(del.code).toBe(0);
      expect(json(del)).toEqual({ id, deleted: true });
    } finally {
      await scanner.api.call('DELETE', `/schedules/${id}`); // already gone when every step passed
    }
    const gone = await cli(['schedules', 'get', id]);
    expect({ code: gone.code, stderr: gone.stderr }).toEqual({
      code: 4,
      stderr: `state-relay: 404 schedule_not_found: no schedule with id "${id}"\n`,
    });
  });

  it('bad flags and arguments exit 2 before any request; an API refusal exits 3 with its issues', async () => {
    for (const [args, message] of [
      [['scans', 'list', '--bogus'], "Unknown option '--bogus'"],
      [['scans', 'get'], '"scans get" takes ID, got none'],
      [['schedules', 'create', '--name', 'x', '--preset', 'dormant'], 'give exactly one of --interval and --cron'],
      [['scans', 'lists'], 'unknown verb "lists" of scans'],
    ] as const) {
      const run = await cli([...args]);
      expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
      expect(run.stderr).toContain(`state-relay: ${message}`);
    }
    const refused = await cli(['schedules', 'create', '--name', 'x', '--cron', 'not a cron', '--preset', 'dormant']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/^state-relay: 400 invalid_request: [^]*\n {2}\/body\/cron: /);
  });

  it('a wrong token: exit 3 with the API message; --token warns; the token is in no output of any run', async () => {
    const wrong = `${TOKEN}-wrong`;
    const denied = await cli(['scans', 'list'], { STATE_RELAY_API_TOKEN: wrong });
    expect({ code: denied.code, stderr: denied.stderr }).toEqual({
      code: 3,
      stderr: 'state-relay: 401 unauthorized: the bearer token is not valid\n',
    });
    const flagged = await cli(['scans', 'list', '--token', TOKEN], { STATE_RELAY_API_TOKEN: '' });
    expect(flagged.code).toBe(0);
    expect(flagged.stderr).toMatch(/^state-relay: warning: --token puts the token on the command line/);
    expect(outputs.length).toBeGreaterThan(40);
    for (const text of outputs) expect(text).not.toContain(TOKEN);
  });

  it("--version prints the scanner package's version, also through the state-relay bin", async () => {
    const { version } = JSON.parse(readFileSync(resolve(__dirname, '../package.json'), 'utf8')) as { version: string };
    expect(await cli(['--version'], { STATE_RELAY_API_TOKEN: '' })).toMatchObject({ code: 0, stdout: `${version}\n` });
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: bash scripts/setup.sh links it`);
    expect(await start(['--version'], {}, BIN).done).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});
