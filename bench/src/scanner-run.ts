import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Deployment } from './deployment';
import { peakRssOf, trackProcess } from './ipc';
import type { LatencyBudget, Pace, PaceSample } from './latency-budget';
import { freePort, serviceEntry, type Action, type Condition } from './lib';

const SERVER = serviceEntry('@state-relay/scanner', 'server.js');

/** What the benchmark reads of a scan (services/scanner's ScanView). */
export interface ScanView {
  id: string;
  status: 'pending' | 'running' | 'completed' | 'cancelled' | 'failed';
  phase: string | null;
  counts: { scanned: number; matched: number; emitted: number; pending: number; results: Record<string, number> };
  /** While the walk emits: the paced rate and what limits it (null otherwise). */
  pace?: Pace | null;
  backoffSeconds: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  error: string | null;
}

/**
 * The real scanner service (services/scanner, built JS) as its own process, driven through
 * its HTTP API exactly as an operator would: the topic relay of the comparison.
 */
export interface ScannerOptions {
  maxCommandLag: number;
  nice: number;
  /** The scanner's LOG_LEVEL; `warn` by default (info logs its replica's progress, see onLog). */
  logLevel?: string;
  /**
   * The processors whose GET /status the scanner reads once a second (PROCESSOR_URLS) with their
   * token (PROCESSOR_API_TOKEN): the signal of its latency-budget pacer. Without them the pacer has
   * no reading and ramps up to the scan's rate cap (the scanner warns at start).
   */
  processors?: { urls: string[]; token: string };
  /** SCAN_LATENCY_BUDGET, the budget of scans that set none (`1.2x`, `300ms`, `off`); unset: the scanner's default, 1.2x. */
  defaultBudget?: string;
}

/** One JSON log line of the scanner (pino): `time` is epoch ms. */
export interface ScannerLogLine {
  time: number;
  level: number;
  msg: string;
  [field: string]: unknown;
}

export class ScannerProcess {
  private readonly child: ChildProcess;
  private readonly token = randomBytes(16).toString('hex');
  private readonly exited: Promise<number | null>;
  private readonly logListeners = new Set<(line: ScannerLogLine) => void>();
  private partialLine = '';
  readonly spawnedAt = Date.now();
  output = '';

  private constructor(
    private readonly port: number,
    d: Deployment,
    brokers: string[],
    options: ScannerOptions,
  ) {
    // `nice` execs node, so the pid stays the scanner's.
    const [command, args] =
      options.nice > 0
        ? ['nice', ['-n', String(options.nice), process.execPath, SERVER]]
        : [process.execPath, [SERVER]];
    this.child = spawn(command, args, {
      env: {
        ...process.env,
        KAFKA_BROKERS: brokers.join(','),
        APP_ID: d.appId,
        COMMANDS_TOPIC: d.commandsTopic,
        RESULTS_TOPIC: d.resultsTopic,
        STATE_DIR: join(d.stateDir, 'scanner'),
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        API_TOKEN: this.token,
        MAX_COMMAND_LAG: String(options.maxCommandLag),
        ...(options.processors
          ? { PROCESSOR_URLS: options.processors.urls.join(','), PROCESSOR_API_TOKEN: options.processors.token }
          : {}),
        ...(options.defaultBudget !== undefined ? { SCAN_LATENCY_BUDGET: options.defaultBudget } : {}),
        LOG_LEVEL: options.logLevel ?? 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const capture = (b: Buffer) => {
      this.output = (this.output + b.toString()).slice(-20_000);
      if (process.env.BENCH_VERBOSE) process.stderr.write(`[scanner] ${b.toString()}`);
    };
    this.child.stdout!.on('data', (b: Buffer) => {
      capture(b);
      if (this.logListeners.size > 0) this.parseLines(b.toString());
    });
    this.child.stderr!.on('data', capture);
    this.exited = new Promise((res) => this.child.once('exit', (code) => res(code)));
    trackProcess({ kill: () => this.child.kill('SIGKILL') }, this.exited);
  }

  static async start(d: Deployment, brokers: string[], options: ScannerOptions): Promise<ScannerProcess> {
    return new ScannerProcess(await freePort(), d, brokers, options);
  }

  /** Every JSON log line the scanner writes to stdout from now on (lines below its LOG_LEVEL never come). */
  onLog(listener: (line: ScannerLogLine) => void): () => void {
    this.logListeners.add(listener);
    return () => this.logListeners.delete(listener);
  }

  private parseLines(text: string): void {
    const lines = (this.partialLine + text).split('\n');
    this.partialLine = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      let entry: ScannerLogLine;
      try {
        entry = JSON.parse(line) as ScannerLogLine;
      } catch {
        continue;
      }
      for (const l of [...this.logListeners]) l(entry);
    }
  }

  /** GET /metrics: the Prometheus text. */
  async metricsText(): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.port}/metrics`);
    if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
    return res.text();
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(`http://127.0.0.1:${this.port}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as T };
  }

  /**
   * What the scanner last read of each processor (its GET /status `processors.instances`): whether
   * it answered and, if not, why (`timeout`, …), and its event commit p99 then: the pacer's signal.
   */
  async processorReadings(): Promise<
    Array<{ reachable: boolean; error: string | null; checkedAt: string | null; eventP99Ms: number | null }>
  > {
    const res = await this.request<{
      processors?: {
        instances?: Array<{
          reachable: boolean;
          error: string | null;
          checkedAt: string | null;
          status: { eventCommitLatency?: { p99Ms: number | null } } | null;
        }>;
      };
    }>('GET', '/status');
    if (res.status !== 200) throw new Error(`GET /status answered ${res.status}`);
    return (res.body.processors?.instances ?? []).map((i) => ({
      reachable: i.reachable,
      error: i.error,
      checkedAt: i.checkedAt,
      eventP99Ms: i.status?.eventCommitLatency?.p99Ms ?? null,
    }));
  }

  /** Until the replica has caught up with the changelog (GET /readyz). */
  async ready(timeoutMs = 600_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.child.exitCode !== null) throw new Error(`scanner exited with ${this.child.exitCode}\n${this.output}`);
      const res = await this.request('GET', '/readyz').catch(() => undefined);
      if (res?.status === 200) return Date.now();
      if (Date.now() > deadline) throw new Error(`scanner not ready in ${timeoutMs} ms\n${this.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async createScan(body: {
    condition: Condition;
    action: Action;
    asOf: number;
    options: { rate?: number; latencyBudget?: LatencyBudget };
  }): Promise<ScanView> {
    const res = await this.request<{ scan: ScanView }>('POST', '/scans', body);
    if (res.status !== 202) throw new Error(`POST /scans answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.scan;
  }

  /**
   * Polls the scan until it finished (completed: every emitted command has its result); `onPoll`
   * gets each answer's pace and emitted count (the latency-budget part records the pace over time).
   */
  async finished(
    id: string,
    timeoutMs = 1_800_000,
    pollMs = 100,
    onPoll?: (sample: PaceSample) => void,
    cancelAt?: number,
  ): Promise<ScanView & { seenDoneAt: number; cancelledAt?: number }> {
    const deadline = Date.now() + timeoutMs;
    let cancelledAt: number | undefined;
    for (;;) {
      const { body } = await this.request<ScanView>('GET', `/scans/${encodeURIComponent(id)}`);
      onPoll?.({ at: Date.now(), pace: body.pace ?? null, emitted: body.counts.emitted });
      if (body.status === 'completed') return { ...body, seenDoneAt: Date.now() };
      if (body.status === 'cancelled' && cancelledAt !== undefined)
        return { ...body, seenDoneAt: Date.now(), cancelledAt };
      // `cancelAt` (epoch ms): a sweep that runs longer is cut there (POST /scans/:id/cancel).
      if (cancelAt !== undefined && cancelledAt === undefined && Date.now() >= cancelAt) {
        cancelledAt = Date.now();
        const res = await this.request<unknown>('POST', `/scans/${encodeURIComponent(id)}/cancel`);
        if (res.status !== 200 && res.status !== 409)
          throw new Error(`POST /scans/${id}/cancel answered ${res.status}: ${JSON.stringify(res.body)}`);
        continue;
      }
      if (body.status === 'failed' || body.status === 'cancelled')
        throw new Error(`scan ${id} ${body.status}: ${body.error}\n${this.output}`);
      if (Date.now() > deadline) throw new Error(`scan ${id} not finished in ${timeoutMs} ms: ${JSON.stringify(body)}`);
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  peakRss(): number | undefined {
    return peakRssOf(this.child.pid!);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await this.exited;
    clearTimeout(timer);
  }
}
