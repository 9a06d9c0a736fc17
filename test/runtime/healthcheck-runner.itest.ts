import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitUntil } from '@state-relay/testkit';

// scripts/container-runtime.sh's healthcheck runner, started through the script's own function
// (start_healthcheck_runner) by a caller that holds extra descriptors, as a test runner or a
// `flock`-ing CI step does. It needs no container: podman is a stub on PATH and podman's API is
// a fake answering /_ping on a unix socket, so the runner is exercised without touching the
// machine's real runtime (its run dir, pid file and socket are the test's own).
const ROOT = resolve(__dirname, '../..');
const SCRIPT = join(ROOT, 'scripts/container-runtime.sh');
const RUNNER = join(ROOT, 'scripts/podman-healthchecks.sh');

const missing = ['setsid', 'flock', 'curl', 'bash'].filter(
  (c) => spawnSync('sh', ['-c', `command -v ${c}`]).status !== 0,
);
const unsupported =
  process.platform !== 'linux' || !existsSync('/proc/self/fd')
    ? 'needs Linux /proc to read the runner’s descriptors'
    : missing.length > 0
      ? `needs ${missing.join(', ')} (the podman path of container-runtime.sh uses them)`
      : null;
if (unsupported) console.warn(`healthcheck runner test skipped: ${unsupported}`);
const describeOnLinux = unsupported ? describe.skip : describe;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describeOnLinux('the podman healthcheck runner (scripts/container-runtime.sh)', () => {
  let dir: string;
  let runDir: string;
  let sock: string;
  let env: NodeJS.ProcessEnv;
  let api: Server | undefined;
  const started = new Set<number>();

  const pidFile = () => join(runDir, 'podman-healthchecks.pid');
  const runnerPid = () => Number(readFileSync(pidFile(), 'utf8').trim());
  const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(procStatus(pid));

  function procStatus(pid: number): string {
    try {
      return readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      return '';
    }
  }

  /** podman's API, as far as the runner looks at it: GET /_ping answers OK. */
  async function startApi(): Promise<void> {
    rmSync(sock, { force: true });
    api = createServer((req, res) => res.end(req.url === '/_ping' ? 'OK' : '{}'));
    await new Promise<void>((r) => api!.listen(sock, r));
  }

  async function stopApi(): Promise<void> {
    await new Promise((r) => (api ? api.close(r) : r(undefined)));
    api = undefined;
    rmSync(sock, { force: true });
  }

  /**
   * Sources the script and calls one of its functions in a child bash that holds extra
   * descriptors: fd 3 a file opened for writing, fd 4 a pipe the test holds the other end of.
   */
  function callScript(fn: string, extraFile: string): Promise<Run> {
    const fd = openSync(extraFile, 'w');
    const child = spawn('bash', ['-c', `source "$0"; ${fn}`, SCRIPT], {
      env,
      stdio: ['ignore', 'pipe', 'pipe', fd, 'pipe'],
    });
    closeSync(fd);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    // 'exit', not 'close': a runner that inherited the pipes would hold them open forever.
    return new Promise((res) =>
      child.on('exit', (code) => {
        (child.stdio[4] as NodeJS.ReadableStream & { destroy(): void }).destroy();
        setTimeout(() => res({ code, stdout, stderr }), 50);
      }),
    );
  }

  function descriptors(pid: number): Map<number, string> {
    const fds = new Map<number, string>();
    for (const name of readdirSync(`/proc/${pid}/fd`)) {
      try {
        fds.set(Number(name), readlinkSync(`/proc/${pid}/fd/${name}`));
      } catch {
        // closed while listing
      }
    }
    return fds;
  }

  /** Every live process running the runner script with this test's pid file. */
  function runners(): number[] {
    const found: number[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      let cmdline = '';
      try {
        cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      } catch {
        continue;
      }
      if (cmdline.includes(RUNNER) && cmdline.includes(pidFile()) && alive(Number(name))) found.push(Number(name));
    }
    return found;
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'healthcheck-runner-'));
    runDir = join(dir, 'run');
    sock = join(dir, 'podman.sock');
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'podman'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(bin, 'podman'), 0o755);
    env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      STATE_RELAY_RUN_DIR: runDir,
      STATE_RELAY_PODMAN_SOCKET: sock,
    };
    await startApi();
  });

  afterEach(async () => {
    // Only the runners this test started (by pid).
    for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
    started.clear();
    await stopApi();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds no descriptor of the shell that started it, and a second start reuses it', async () => {
    const first = await callScript('start_healthcheck_runner', join(dir, 'caller-lock'));
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toMatch(/started the healthcheck runner, pid \d+/);
    const pid = runnerPid();
    started.add(pid);
    expect(alive(pid)).toBe(true);

    // 0 is /dev/null, 1 and 2 its log; bash's own copy of the script it runs (fd 255,
    // close-on-exec) is the only other one. Nothing of the caller: not the file on fd 3, not
    // the pipe on fd 4, not the caller's stdout/stderr pipes, not the start lock.
    const fds = descriptors(pid);
    const log = join(runDir, 'podman-healthchecks.log');
    const theirs = [...fds].filter(([fd, target]) => !(fd === 255 && target === RUNNER));
    expect(theirs).toEqual([
      [0, '/dev/null'],
      [1, log],
      [2, log],
    ]);
    expect(
      [...fds.values()].some((t) => t.includes('caller-lock') || t.startsWith('pipe:') || t.includes('.lock')),
    ).toBe(false);

    // A second start, from another "checkout's" shell, finds it alive and starts nothing.
    const second = await callScript('start_healthcheck_runner', join(dir, 'caller-lock-2'));
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toContain(`healthcheck runner already running (pid ${pid})`);
    expect(runnerPid()).toBe(pid);
    expect(runners()).toEqual([pid]);
  });

  it('a stale pid file (its process gone) does not stop a new runner from starting', async () => {
    mkdirSync(runDir, { recursive: true });
    const gone = spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim();
    writeFileSync(pidFile(), `${gone}\n`);
    const run = await callScript('start_healthcheck_runner', join(dir, 'caller-lock'));
    expect(run.code).toBe(0);
    const pid = runnerPid();
    started.add(pid);
    expect(pid).not.toBe(Number(gone));
    expect(runners()).toEqual([pid]);
  });

  it('stops with the runtime it serves: when podman’s API stops answering, it exits and removes its pid file', async () => {
    await callScript('start_healthcheck_runner', join(dir, 'caller-lock'));
    const pid = runnerPid();
    started.add(pid);
    await stopApi();
    await waitUntil(() => !alive(pid), { timeoutMs: 90_000, intervalMs: 500, message: 'the runner to exit' });
    expect(existsSync(pidFile())).toBe(false);
    expect(readFileSync(join(runDir, 'podman-healthchecks.log'), 'utf8')).toMatch(
      /stopped answering; stopping with it/,
    );
  });

  it('`container-runtime.sh stop` stops it', async () => {
    await callScript('start_healthcheck_runner', join(dir, 'caller-lock'));
    const pid = runnerPid();
    started.add(pid);
    const stop = spawnSync('bash', [SCRIPT, 'stop'], { env, encoding: 'utf8' });
    expect(stop.status).toBe(0);
    expect(stop.stdout).toContain(`stopped the healthcheck runner (pid ${pid})`);
    await waitUntil(() => !alive(pid), { timeoutMs: 30_000, intervalMs: 200, message: 'the runner to exit' });
    expect(existsSync(pidFile())).toBe(false);
  });
});
