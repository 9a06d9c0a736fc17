import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, waitUntil } from '@state-relay/testkit';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { Deployment } from '../../processor/test/harness';
import { buildApp } from '../src/http/app';
import { loadConfig, type ScannerConfig } from '../src/config';
import { createScannerMetrics } from '../src/metrics';
import { Scanner } from '../src/scanner';
import type { ScanView } from '../src/scans/scan-view';

export const TOKEN = 'integration-test-token-0123456789';
const SERVER = resolve(__dirname, '../dist/server.js');

export function scannerEnv(
  d: Deployment,
  stateDir: string,
  port: number,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    KAFKA_BROKERS: d.brokers.join(','),
    APP_ID: d.appId,
    STORE_NAME: 'accounts',
    COMMANDS_TOPIC: d.commandsTopic,
    RESULTS_TOPIC: d.resultsTopic,
    STATE_DIR: stateDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(port),
    API_TOKEN: TOKEN,
    LOG_LEVEL: process.env.STATE_RELAY_TEST_LOG_LEVEL ?? 'warn',
    ...extra,
  };
}

/** The HTTP API of a scanner under test, with the token. */
export class ScannerApi {
  constructor(readonly url: string) {}

  async call(method: string, path: string, body?: unknown, token: string | null = TOKEN) {
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const json = res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : {};
    return { status: res.status, headers: res.headers, text, json: json as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  async create(body: unknown): Promise<ScanView> {
    const res = await this.call('POST', '/scans', body);
    if (res.status !== 202) throw new Error(`POST /scans answered ${res.status}: ${res.text}`);
    return res.json.scan as ScanView;
  }

  async get(id: string): Promise<ScanView> {
    const res = await this.call('GET', `/scans/${id}`);
    if (res.status !== 200) throw new Error(`GET /scans/${id} answered ${res.status}: ${res.text}`);
    return res.json as ScanView;
  }

  /** Polls until `probe(scan)` holds. */
  async waitFor(id: string, probe: (s: ScanView) => boolean, what: string, timeoutMs = 120_000): Promise<ScanView> {
    let last: ScanView | undefined;
    try {
      return await waitUntil(
        async () => {
          last = await this.get(id);
          return probe(last) && last;
        },
        { timeoutMs, intervalMs: 100, message: what },
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}; last seen: ${JSON.stringify(last)}`);
    }
  }

  finished(id: string, timeoutMs?: number): Promise<ScanView> {
    return this.waitFor(
      id,
      (s) => ['completed', 'cancelled', 'failed'].includes(s.status),
      `scan ${id} to finish`,
      timeoutMs,
    );
  }

  async waitReady(timeoutMs = 60_000): Promise<void> {
    await waitUntil(async () => (await fetch(`${this.url}/readyz`).catch(() => undefined))?.status === 200, {
      timeoutMs,
      intervalMs: 100,
      message: 'the scanner replica to catch up',
    });
  }
}

/** A scanner in this process: the real Scanner and app, listening on a free port. */
export class InProcessScanner {
  readonly stateDir = mkdtempSync(join(tmpdir(), 'scanner-'));
  scanner!: Scanner;
  app!: FastifyInstance;
  api!: ScannerApi;
  config!: ScannerConfig;

  async start(d: Deployment, extra: Record<string, string> = {}): Promise<this> {
    this.config = loadConfig(scannerEnv(d, this.stateDir, 0, extra));
    const logger = pino({ level: process.env.STATE_RELAY_TEST_LOG_LEVEL ?? 'warn' });
    const metrics = createScannerMetrics();
    this.scanner = new Scanner({ config: this.config, logger, metrics });
    this.app = buildApp({
      scans: this.scanner.service,
      replica: this.scanner.replicaHealth,
      metrics,
      logger,
      apiToken: this.config.apiToken,
      maxBodyBytes: this.config.maxBodyBytes,
      schedules: this.scanner.schedules,
      commandLag: this.scanner.commandLag,
      processors: this.config.processors,
      processorSampler: this.scanner.processors,
    });
    this.api = new ScannerApi(await this.app.listen({ host: '127.0.0.1', port: 0 }));
    await this.scanner.start();
    this.scanner.scheduler.start();
    await this.api.waitReady();
    return this;
  }

  async stop(): Promise<void> {
    await this.app?.close();
    await this.scanner?.stop();
    rmSync(this.stateDir, { recursive: true, force: true });
  }
}

/** A scanner as a real child process (built JS), so it can be SIGKILLed. */
export class ScannerProcess {
  private child?: ChildProcess;
  private exited?: Promise<number | null>;
  output = '';
  api!: ScannerApi;

  constructor(
    private readonly deployment: Deployment,
    readonly stateDir = mkdtempSync(join(tmpdir(), 'scanner-proc-')),
  ) {}

  async start(extra: Record<string, string> = {}): Promise<this> {
    const port = await freePort();
    this.api = new ScannerApi(`http://127.0.0.1:${port}`);
    this.child = spawn(process.execPath, [SERVER], {
      env: { ...process.env, ...scannerEnv(this.deployment, this.stateDir, port, extra) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const capture = (b: Buffer) => {
      this.output = (this.output + b.toString()).slice(-20_000);
      if (process.env.STATE_RELAY_TEST_LOG_LEVEL) process.stderr.write(b);
    };
    this.child.stdout!.on('data', capture);
    this.child.stderr!.on('data', capture);
    this.exited = new Promise((res) => this.child!.once('exit', (code) => res(code)));
    await waitUntil(
      async () => {
        if (this.child?.exitCode !== null)
          throw new Error(`scanner exited with ${this.child?.exitCode}:\n${this.output}`);
        return (await fetch(`${this.api.url}/readyz`).catch(() => undefined))?.status === 200;
      },
      { timeoutMs: 60_000, intervalMs: 100, message: 'the scanner process to be ready' },
    );
    return this;
  }

  async kill(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  async stop(): Promise<number | null> {
    if (!this.child || this.child.exitCode !== null) return this.child?.exitCode ?? null;
    this.child.kill('SIGTERM');
    return this.exited!;
  }

  cleanup(): void {
    rmSync(this.stateDir, { recursive: true, force: true });
  }
}
