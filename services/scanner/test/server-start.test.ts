import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KNOWN_PLACEHOLDER_TOKENS } from '@state-relay/service-kit';

// The scanner's process refusing to start (exit 2, before it connects to anything) on a public or
// guessable token, naming the variable and never printing the value. Runs the built server
// (dist/, made by `tsc -b`). Issue 34 item 3.
const SERVER = resolve(__dirname, '../dist/server.js');
jest.setTimeout(60_000);

function start(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    // The broker is never reached: the configuration is refused first (port 9 is discard).
    const child = spawn(process.execPath, [SERVER], {
      env: { PATH: process.env.PATH, KAFKA_BROKERS: '127.0.0.1:9', HTTP_PORT: '0', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

describe('the scanner refuses a public or guessable API token at start', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'scanner-start-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(".env.example's placeholder, as cp .env.example .env && docker compose up would pass it: exit 2 naming API_TOKEN", async () => {
    const placeholder = KNOWN_PLACEHOLDER_TOKENS[0]!;
    const { code, stdout, stderr } = await start({ API_TOKEN: placeholder, STATE_DIR: dir });
    expect(code).toBe(2);
    expect(stderr).toMatch(/API_TOKEN is a placeholder/);
    expect(stdout + stderr).not.toContain(placeholder);
  });

  it('a guessable token in a mounted secret (API_TOKEN_FILE), or for the processors: exit 2 naming each', async () => {
    const file = join(dir, 'api-token');
    writeFileSync(file, 'password1234567890\n');
    const { code, stdout, stderr } = await start({
      API_TOKEN_FILE: file,
      PROCESSOR_API_TOKEN: 'aaaaaaaaaaaaaaaaaaaa',
      STATE_DIR: dir,
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/API_TOKEN is too easy to guess/);
    expect(stderr).toMatch(/PROCESSOR_API_TOKEN is too easy to guess/);
    expect(stdout + stderr).not.toMatch(/password1234567890|aaaaaaaaaaaaaaaaaaaa/);
  });

  it('a random token passes the check (the start then goes on to Kafka, which this test does not reach)', async () => {
    const token = randomBytes(24).toString('base64url');
    const child = spawn(process.execPath, [SERVER], {
      env: { PATH: process.env.PATH, KAFKA_BROKERS: '127.0.0.1:9', HTTP_PORT: '0', API_TOKEN: token, STATE_DIR: dir },
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const early = await Promise.race([exited, new Promise((r) => setTimeout(() => r('running'), 3_000))]);
    child.kill('SIGKILL'); // a graceful stop would wait for the unreachable broker
    await exited;
    expect(early).not.toBe(2);
    expect(out).not.toContain('invalid configuration');
    expect(out).not.toContain(token);
  });

  // Issue 34 item 8: SASL PLAIN over SASL_PLAINTEXT was accepted silently.
  it('SASL PLAIN over SASL_PLAINTEXT starts, with a warning that names the variables and never the password', async () => {
    const password = randomBytes(18).toString('base64url');
    const child = spawn(process.execPath, [SERVER], {
      env: {
        PATH: process.env.PATH,
        KAFKA_BROKERS: '127.0.0.1:9',
        HTTP_PORT: '0',
        API_TOKEN: randomBytes(24).toString('base64url'),
        STATE_DIR: dir,
        KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
        KAFKA_SASL_MECHANISM: 'PLAIN',
        KAFKA_SASL_USERNAME: 'relay',
        KAFKA_SASL_PASSWORD: password,
      },
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const deadline = Date.now() + 20_000;
    while (!out.includes('cleartext') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGTERM');
    await exited;
    const warning = out.split('\n').find((l) => l.includes('cleartext'));
    expect(warning).toBeDefined();
    expect(JSON.parse(warning!)).toMatchObject({
      level: 40,
      msg: expect.stringMatching(/^KAFKA_SASL_MECHANISM=PLAIN over KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT/),
    });
    expect(out).not.toContain(password);
  });
});
