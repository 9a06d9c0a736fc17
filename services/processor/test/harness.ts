import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generateAccountEvents } from '@state-relay/accounts/testing';
import { decodeStoredEntity, encodeEvent, type DomainEvent, type StoredEntity } from '@state-relay/contracts';
import { freePort, metricSum, readTopic, uniqueName, waitUntil } from '@state-relay/testkit';
import type { Kafka } from 'kafkajs';

const SERVER = resolve(__dirname, '../dist/server.js');
/** The bearer token GET /state/:key asks for (STATE_API_TOKEN) in processors started by tests. */
export const STATE_TOKEN = 'processor-test-state-token-0123456789';

/** Topic names, group and state directory of one processor deployment under test. */
export interface Deployment {
  appId: string;
  eventsTopic: string;
  commandsTopic: string;
  resultsTopic: string;
  deadLetterTopic: string;
  changelogTopic: string;
  partitions: number;
  brokers: string[];
}

export function newDeployment(brokers: string[], partitions = 4): Deployment {
  const appId = uniqueName('proc');
  return {
    appId,
    eventsTopic: `${appId}-events`,
    commandsTopic: `${appId}-commands`,
    resultsTopic: `${appId}-results`,
    deadLetterTopic: `${appId}-dlq`,
    changelogTopic: `${appId}-accounts-changelog`,
    partitions,
    brokers,
  };
}

/** The processor's variables that name the deployment's broker and topics. */
export function deploymentEnv(d: Deployment): Record<string, string> {
  return {
    KAFKA_BROKERS: d.brokers.join(','),
    APP_ID: d.appId,
    EVENTS_TOPIC: d.eventsTopic,
    COMMANDS_TOPIC: d.commandsTopic,
    RESULTS_TOPIC: d.resultsTopic,
    DEAD_LETTER_TOPIC: d.deadLetterTopic,
    PARTITIONS: String(d.partitions),
  };
}

/** A processor running as a real child process (built JS), so it can be SIGKILLed. */
export class ProcessorProcess {
  private child?: ChildProcess;
  readonly port: Promise<number>;
  output = '';
  private exited?: Promise<number | null>;

  constructor(
    private readonly deployment: Deployment,
    readonly stateDir = mkdtempSync(join(tmpdir(), 'processor-')),
  ) {
    this.port = freePort();
  }

  get url(): Promise<string> {
    return this.port.then((p) => `http://127.0.0.1:${p}`);
  }

  async start(extraEnv: Record<string, string> = {}): Promise<this> {
    const d = this.deployment;
    const port = await this.port;
    this.child = spawn(process.execPath, [SERVER], {
      env: {
        ...process.env,
        ...deploymentEnv(d),
        STATE_DIR: this.stateDir,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        LOG_LEVEL: process.env.STATE_RELAY_TEST_LOG_LEVEL ?? 'warn',
        SESSION_TIMEOUT_MS: '10000',
        STATE_API_TOKEN: STATE_TOKEN,
        ...extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (b: Buffer) => this.capture(b));
    this.child.stderr!.on('data', (b: Buffer) => this.capture(b));
    this.exited = new Promise((res) => this.child!.once('exit', (code) => res(code)));
    return this;
  }

  private capture(b: Buffer): void {
    this.output = (this.output + b.toString()).slice(-20_000);
    if (process.env.STATE_RELAY_TEST_LOG_LEVEL) process.stderr.write(b);
  }

  async waitReady(timeoutMs = 90_000): Promise<void> {
    const url = await this.url;
    await waitUntil(
      async () => {
        if (this.child?.exitCode !== null && this.child?.exitCode !== undefined) {
          throw new Error(`processor exited with ${this.child.exitCode}:\n${this.output}`);
        }
        const res = await fetch(`${url}/readyz`).catch(() => undefined);
        if (!res || res.status !== 200) return false;
        const body = (await res.json()) as { tasks: number[] };
        return body.tasks.length > 0;
      },
      { timeoutMs, intervalMs: 200, message: 'the processor to be ready' },
    );
  }

  async getState(key: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${await this.url}/state/${encodeURIComponent(key)}`, {
      headers: { authorization: `Bearer ${STATE_TOKEN}` },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** The exit code once the process has exited by itself (or been stopped). */
  exitCode(): Promise<number | null> {
    return this.exited ?? Promise.resolve(null);
  }

  /** SIGTERM and wait for a clean exit. */
  async stop(): Promise<number | null> {
    if (!this.child || this.child.exitCode !== null) return this.child?.exitCode ?? null;
    this.child.kill('SIGTERM');
    return this.exited!;
  }

  /** SIGSTOP / SIGCONT: freeze the process (sockets and open transactions stay as they are) and thaw it. */
  signal(sig: 'SIGSTOP' | 'SIGCONT'): void {
    this.child?.kill(sig);
  }

  /** The sum of a Prometheus metric's samples whose labels contain `labels`. */
  async metric(name: string, labels = ''): Promise<number> {
    return metricSum(await (await fetch(`${await this.url}/metrics`)).text(), name, labels);
  }

  /** SIGKILL: no shutdown code runs; open transactions stay open until fenced. */
  async kill(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  cleanup(): void {
    rmSync(this.stateDir, { recursive: true, force: true });
  }
}

export async function produceEvents(
  kafka: Kafka,
  topic: string,
  events: Array<{ key: string; event: DomainEvent }>,
): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    for (let i = 0; i < events.length; i += 2000) {
      await producer.send({
        topic,
        messages: events.slice(i, i + 2000).map(({ key, event }) => ({ key, value: encodeEvent(event) })),
      });
    }
  } finally {
    await producer.disconnect();
  }
}

/** Waits until the group has committed offsets up to the end of every partition of `topic`. */
export async function waitCaughtUp(kafka: Kafka, groupId: string, topic: string, timeoutMs = 120_000): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ends = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
    await waitUntil(
      async () => {
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
        return committed!.partitions.every((p) => {
          const end = ends.get(p.partition) ?? 0n;
          return end === 0n || (p.offset !== '-1' && BigInt(p.offset) >= end);
        });
      },
      { timeoutMs, intervalMs: 250, message: `group ${groupId} to consume ${topic} to the end` },
    );
  } finally {
    await admin.disconnect();
  }
}

/** The state as the changelog (the source of truth) says: last record per key, tombstones removed. */
export async function changelogState(
  kafka: Kafka,
  topic: string,
  timeoutMs = 60_000,
): Promise<Map<string, StoredEntity>> {
  const records = await readTopic(kafka, topic, { isolation: 'read_committed', timeoutMs });
  const state = new Map<string, StoredEntity>();
  for (const r of records) {
    const entity = decodeStoredEntity(
      r.key ? Buffer.from(r.key) : null,
      r.value === null ? null : Buffer.from(r.value),
    );
    if (entity) state.set(r.key!, entity);
    else state.delete(r.key!);
  }
  return state;
}

export function demoEvents(accounts: number, eventsPerAccount: number, seed: number) {
  return generateAccountEvents({ accounts, eventsPerAccount, seed, now: Date.UTC(2026, 10, 1), dormantFraction: 0.3 });
}
