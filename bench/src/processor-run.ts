import type { CommitsReport, ProcessorChildConfig } from './children/processor-child';
import type { Deployment } from './deployment';
import { Child, type ChildMessage } from './ipc';
import { CommitLog } from './stats';

export interface RestoreReport {
  records: number;
  ms: number;
}

/** One "tasks restored" log line of the processor: when it was written, and for which tasks. */
export interface RestoreEvent extends RestoreReport {
  at: number;
  tasks: number[];
}

/** The tasks an instance owns and those of them RUNNING, as of `at`. */
export interface TaskStates {
  at: number;
  owned: number[];
  running: number[];
}

/** A processor child for one deployment, with everything it reports collected. */
export class ProcessorRun {
  readonly log: CommitLog;
  readonly restores: RestoreEvent[] = [];
  /** Every group join (the processor's "joined the group" line): when, and the tasks assigned. */
  readonly joins: Array<{ at: number; tasks: number[] }> = [];
  /** The latest task states the child reported. */
  tasksNow: TaskStates = { at: 0, owned: [], running: [] };
  /** Highest JS heap and off-heap (Buffers, SQLite's ArrayBuffers) seen, in bytes. */
  readonly memory = { heapUsed: 0, external: 0 };
  /** Warnings and errors the processor logged (kafkajs's errors arrive as warnings), by message. */
  readonly warnings: Record<string, number> = {};
  readonly child: Child;
  readonly spawnedAt = Date.now();
  /** The tasks the processor owns once ready: one per partition. */
  readonly tasks: number[];
  readyAt?: number;
  /** With `statusToken`: the processor's HTTP base URL (its GET /status), known once it listens (before ready). */
  statusUrl?: string;
  private readonly readyMessage: Promise<{ type: 'ready'; at: number }>;

  constructor(
    brokers: string[],
    d: Deployment,
    o: {
      processorEnv: Record<string, string>;
      txRetryMs?: number;
      eventLatencies?: boolean;
      /** Serve GET /status behind this bearer token (for the scanner's latency-budget pacer). */
      statusToken?: string;
    },
    execArgv: string[] = [],
  ) {
    this.log = new CommitLog(o.eventLatencies ?? false);
    const config: ProcessorChildConfig = {
      brokers,
      appId: d.appId,
      eventsTopic: d.eventsTopic,
      commandsTopic: d.commandsTopic,
      resultsTopic: d.resultsTopic,
      deadLetterTopic: d.deadLetterTopic,
      partitions: d.partitions,
      stateDir: d.stateDir,
      // Topics the processor would create get the deployment's replication (they exist already: it checks them).
      env: {
        ...(d.replication
          ? {
              TOPIC_REPLICATION_FACTOR: String(d.replication.factor),
              TOPIC_MIN_INSYNC_REPLICAS: String(d.replication.minInsyncReplicas),
            }
          : {}),
        ...o.processorEnv,
      },
      ...(o.txRetryMs !== undefined ? { txRetryMs: o.txRetryMs } : {}),
      ...(o.statusToken !== undefined ? { statusToken: o.statusToken } : {}),
    };
    this.tasks = Array.from({ length: d.partitions }, (_, i) => i);
    this.child = Child.start('processor', 'processor-child', config, execArgv);
    this.readyMessage = this.child.next<{ type: 'ready'; at: number }>('ready', 600_000);
    this.readyMessage.catch(() => undefined);
    this.child.on((m: ChildMessage) => {
      if (m.type === 'commits') this.log.add(m as CommitsReport);
      else if (m.type === 'restored')
        this.restores.push({
          at: Number(m.at),
          records: Number(m.records),
          ms: Number(m.ms),
          tasks: m.tasks as number[],
        });
      else if (m.type === 'http') this.statusUrl = `http://127.0.0.1:${Number(m.port)}`;
      else if (m.type === 'joined') this.joins.push({ at: Number(m.at), tasks: m.tasks as number[] });
      else if (m.type === 'tasks')
        this.tasksNow = { at: Number(m.at), owned: m.owned as number[], running: m.running as number[] };
      else if (m.type === 'warning') this.warnings[String(m.msg)] = (this.warnings[String(m.msg)] ?? 0) + 1;
      else if (m.type === 'memory') {
        this.memory.heapUsed = Math.max(this.memory.heapUsed, Number(m.heapUsed));
        this.memory.external = Math.max(this.memory.external, Number(m.external));
      }
    });
  }

  /** Resolves when the processor owns every task, restored. */
  async ready(): Promise<number> {
    const m = await this.readyMessage;
    this.readyAt = m.at;
    return m.at;
  }

  /** Until `ready(tasks)` holds for the task states the child reports (polled every 20 ms). */
  async waitTasks(ready: (t: TaskStates) => boolean, what: string, timeoutMs = 600_000): Promise<TaskStates> {
    const deadline = Date.now() + timeoutMs;
    while (!ready(this.tasksNow)) {
      if (Date.now() > deadline) throw new Error(`processor: ${what} not within ${timeoutMs} ms\n${this.child.stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.tasksNow;
  }

  /** The sum of a metric's samples in the processor's registry (what its /metrics shows); NaN if it has none by that name. */
  async metric(name: string): Promise<number> {
    const reply = this.child.next<{ type: 'metric'; values: Array<{ value: number }> | null }>('metric', 10_000);
    this.child.send({ type: 'metric', name });
    const { values } = await reply;
    return values === null ? NaN : values.reduce((a, v) => a + v.value, 0);
  }

  /**
   * Records restored over the restores this instance did, and the time from the first one's start
   * to the last one's end (each task logs its own restore: tasks enter side by side).
   */
  get restored(): RestoreReport {
    return spanOf(this.restores);
  }

  /** Clean stop (the last commit report arrives before it exits); returns peak RSS in bytes. */
  async stop(): Promise<number | undefined> {
    const peak = this.child.peakRss();
    const code = await this.child.stop();
    if (code !== 0) throw new Error(`processor exited with ${code}\n${this.child.stderr}`);
    return peak;
  }
}

/** Restore lines taken together: their records, and from the first one's start to the last one's end. */
export function spanOf(restores: readonly RestoreEvent[]): RestoreReport & { at: number } {
  if (restores.length === 0) return { records: 0, ms: 0, at: NaN };
  const start = Math.min(...restores.map((r) => r.at - r.ms));
  const at = Math.max(...restores.map((r) => r.at));
  return { records: restores.reduce((n, r) => n + r.records, 0), ms: at - start, at };
}
