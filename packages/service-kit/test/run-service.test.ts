import { spawn } from 'node:child_process';
import { join } from 'node:path';

// A service as a child process run by the built kit (dist/, made by `tsc -b`), so its exit code
// and signals are real.
const CHILD = join(__dirname, 'fixtures/service-child.js');
// A node child takes about a second to start alone, several on a loaded machine.
jest.setTimeout(30_000);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(mode: string, env: Record<string, string> = { DEMO_PORT: '1' }, signal?: NodeJS.Signals): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CHILD, mode], { env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let stderr = '';
    let signalled = false;
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      if (signal && !signalled && stdout.includes('started\n')) signalled = child.kill(signal);
    });
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const lines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string; service: string; app: string });

describe('runService: the process around a service', () => {
  it('exits 2 on a bad configuration, every problem on stderr', async () => {
    const { code, stdout, stderr } = await run('ok', { DEMO_PORT: '7' });
    expect(code).toBe(2);
    expect(stderr).toBe('invalid configuration:\n  - DEMO_PORT must be 1, got "7"\n  - DEMO_X is required\n');
    expect(stdout).toBe('');
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('stops gracefully on %s and exits 0', async (signal) => {
    const { code, stdout } = await run('ok', undefined, signal);
    expect(code).toBe(0);
    expect(stdout).toContain('stop called');
    const messages = lines(stdout).map((l) => l.msg);
    expect(messages).toEqual(expect.arrayContaining(['stopping: nothing to wait for', 'stopped']));
    expect(lines(stdout)[0]).toMatchObject({ service: 'demo', app: 'test' });
  });

  it('stops a start still under way, and exits 0', async () => {
    const { code, stdout } = await run('slow-start', undefined, 'SIGTERM');
    expect(code).toBe(0);
    expect(lines(stdout).some((l) => l.msg === 'demo failed to start')).toBe(false);
  });

  it('exits 1 when a stop takes longer than the force-exit delay', async () => {
    const started = Date.now();
    const { code, stdout } = await run('hang', undefined, 'SIGTERM');
    expect(code).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(lines(stdout).map((l) => l.msg)).toContain('graceful stop took too long; exiting');
  });

  it.each([
    ['build-fails', 'cannot open the database'],
    ['start-fails', 'no broker'],
  ])('exits 1 when the service cannot start (%s), saying why', async (mode, why) => {
    const { code, stdout } = await run(mode);
    expect(code).toBe(1);
    const fatal = lines(stdout).find((l) => l.level === 60);
    expect(fatal).toMatchObject({ msg: 'demo failed to start', err: expect.objectContaining({ message: why }) });
    if (mode === 'start-fails') expect(stdout).toContain('stop called');
  });
});
