import { monitorEventLoopDelay } from 'node:perf_hooks';
import { runChild, type ChildMessage } from '../ipc';
import {
  instrumentFetches,
  instrumentTransactions,
  type AbortedTransaction,
  type TransactionTiming,
} from './transaction-timing';
import {
  accountsDomain,
  buildProcessorApp,
  createProcessorMetrics,
  DORMANCY_SWEEP,
  loadConfig,
  pino,
  Processor,
  type CommitReport,
  type ProcessingExtension,
} from '../lib';
import { InLoopSweep } from '../in-loop-sweep';

export interface ProcessorChildConfig {
  brokers: string[];
  appId: string;
  eventsTopic: string;
  commandsTopic: string;
  resultsTopic: string;
  deadLetterTopic: string;
  partitions: number;
  stateDir: string;
  /** Extra environment for loadConfig (bench --processor-env). */
  env: Record<string, string>;
  /** What-if (bench --tx-retry-ms): the retry start of every transactional producer. */
  txRetryMs?: number;
  /**
   * Serve the processor's HTTP app (services/processor's buildApp: GET /status behind this bearer
   * token) on 127.0.0.1, an ephemeral port the child reports ({ type: 'http', port }) before
   * `ready`: the scanner's latency-budget pacer reads `eventCommitLatency` from it.
   */
  statusToken?: string;
}

/** One committed unit of work (one Kafka transaction of one task), as the extension's onCommit sees it. */
export interface CommitEntry {
  task: number;
  /** The unit was swapped out and its transaction begun (epoch ms). */
  startedAt: number;
  /** The Kafka transaction committed (epoch ms). */
  committedAt: number;
  /** onCommit ran: after the SQLite flush of the unit (epoch ms). */
  flushedAt: number;
  /** Input records the unit carried, per input. */
  events: number;
  commands: number;
  changes: number;
  results: number;
  deadLetters: number;
  /** Produce timestamp of the oldest event in the unit (NaN when it carried none; sent as null over IPC). */
  oldestEvent: number | null;
}

/** What the child reports every 250 ms. */
export interface CommitsReport extends ChildMessage {
  type: 'commits';
  commits: CommitEntry[];
  /** Commit − produce time of every event, in commit order (commits[i].events of them per commit). */
  latency: number[];
  /** The same for the update commands (the relay's), commits[i].commands per commit. */
  commandLatency: number[];
  /** Every committed transaction of the task producers, timed at the kafkajs level. */
  transactions: TransactionTiming[];
  /** Transactions that ended in abort (the fence at each task start is one, with nothing sent). */
  aborted: AbortedTransaction[];
  /** The task producers' requests since the last report, by API: how many, and their summed round trips (ms). */
  requests: { at: number; byApi: Record<string, { count: number; ms: number }> };
  /** The processor consumer's fetches: start (epoch ms) and duration (ms). */
  fetches: Array<[number, number]>;
  /** Event-loop delay since the last report (ms): p99 and max; how long the loop could not run anything. */
  loopDelay: { at: number; p99: number; max: number };
}

export interface SweepCommand extends ChildMessage {
  type: 'sweep';
  sweepId: string;
  asOf: number;
  /** Infinity (sent as null over IPC) for the blocking sweep. */
  keysPerSlice: number | null;
}

/**
 * A real Processor (the service's class and defaults), plus the benchmark's extension
 * (ProcessorDeps.extension): onCommit gives every committed transaction with its input records'
 * timestamps, hence each event's produce → commit latency; afterBatch runs the in-loop sweep
 * when the parent asks for one, inside the fetch loop (as a punctuator would).
 */
runChild<ProcessorChildConfig>(async (cfg, send) => {
  const config = loadConfig({
    KAFKA_BROKERS: cfg.brokers.join(','),
    APP_ID: cfg.appId,
    EVENTS_TOPIC: cfg.eventsTopic,
    COMMANDS_TOPIC: cfg.commandsTopic,
    RESULTS_TOPIC: cfg.resultsTopic,
    DEAD_LETTER_TOPIC: cfg.deadLetterTopic,
    PARTITIONS: String(cfg.partitions),
    STATE_DIR: cfg.stateDir,
    LOG_LEVEL: 'info',
    ...cfg.env,
  });
  // pino into a stream that picks out the restore summaries and passes on warnings.
  const logger = pino(
    { level: 'info', base: { service: 'processor', app: cfg.appId } },
    {
      write(line: string) {
        const entry = JSON.parse(line) as {
          level: number;
          time: number;
          msg: string;
          records?: number;
          ms?: number;
          tasks?: number[];
        };
        if (entry.msg === 'tasks restored from the changelog' || entry.msg === 'tasks ready (stores were up to date)') {
          send({
            type: 'restored',
            at: entry.time,
            records: entry.records ?? 0,
            ms: entry.ms ?? 0,
            tasks: entry.tasks ?? [],
          });
        }
        if (entry.msg === 'joined the group') send({ type: 'joined', at: entry.time, tasks: entry.tasks ?? [] });
        if (entry.level >= 40) {
          process.stderr.write(line);
          send({ type: 'warning', msg: entry.msg });
        }
      },
    },
  );
  const metrics = createProcessorMetrics();
  let report = emptyReport();

  /** The in-loop sweep in progress, and for each task the transaction that carries its last sweep change. */
  interface SweepState {
    run: InLoopSweep;
    armedAt: number;
    /** Every task has walked its whole store (its last changes may still be uncommitted). */
    walkedAt?: number;
    /** Task -> the unit of work (Task.openUnit, CommitReport.unit) that carries its last sweep change. */
    target: Map<number, number>;
    reported: boolean;
  }
  let sweep: SweepState | undefined;
  /** Task -> the highest unit of work committed. */
  const committedUnit = new Map<number, number>();
  const sweepCommitted = () => {
    const s = sweep;
    if (!s || s.walkedAt === undefined || s.reported) return;
    for (const [task, unit] of s.target) if ((committedUnit.get(task) ?? -1) < unit) return;
    s.reported = true;
    sweep = undefined;
    send({ type: 'sweep-done', armedAt: s.armedAt, walkedAt: s.walkedAt, doneAt: Date.now(), ...s.run.progress });
  };

  instrumentTransactions(
    {
      onCommitted: (t) => {
        report.transactions.push(t);
      },
      onAborted: (t) => report.aborted.push(t),
      onRequest: (api, ms) => {
        const entry = (report.requests.byApi[api] ??= { count: 0, ms: 0 });
        entry.count++;
        entry.ms += ms;
      },
    },
    cfg.txRetryMs,
  );

  instrumentFetches(config.appId, (startedAt, ms) => report.fetches.push([startedAt, ms]));

  const extension: ProcessingExtension = {
    onCommit: (r: CommitReport) => {
      const flushedAt = Date.now();
      committedUnit.set(r.task, Math.max(committedUnit.get(r.task) ?? -1, r.unit));
      sweepCommitted();
      const events = r.inputs.get(config.eventsTopic) ?? [];
      const commands = r.inputs.get(config.commandsTopic) ?? [];
      let oldest = Infinity;
      for (const t of events) {
        report.latency.push(r.committedAt - t);
        if (t < oldest) oldest = t;
      }
      for (const t of commands) report.commandLatency.push(r.committedAt - t);
      report.commits.push({
        task: r.task,
        startedAt: r.startedAt,
        committedAt: r.committedAt,
        flushedAt,
        events: events.length,
        commands: commands.length,
        changes: r.changes,
        results: r.results,
        deadLetters: r.deadLetters,
        oldestEvent: Number.isFinite(oldest) ? oldest : null,
      });
    },
    // Synchronous: the slice folds its commands into the task's open unit (TaskContext.foldInputs);
    // the CommitReport with that unit's number carries them.
    afterBatch: (task) => {
      const s = sweep;
      if (!s || s.walkedAt !== undefined) return;
      const changes = s.run.progress.changes;
      const unit = task.openUnit; // the slice folds into this unit (a commit it starts takes it)
      s.run.slice(task);
      if (s.run.progress.changes > changes) s.target.set(task.id, unit);
    },
  };

  const processor = new Processor({ config, domain: accountsDomain, logger, metrics, extension });
  // As services/processor/src/server.ts does, listening before the processor starts; its request
  // logs stay out of the stream above (warnings only).
  const app =
    cfg.statusToken === undefined
      ? undefined
      : buildProcessorApp({
          processor,
          metrics,
          logger: logger.child({}, { level: 'warn' }),
          stateAuth: { kind: 'bearer', token: cfg.statusToken },
        });
  if (app) {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    send({ type: 'http', port: typeof address === 'object' && address ? address.port : NaN });
  }
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const takeLoopDelay = () => {
    report.loopDelay = { at: Date.now(), p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
    loop.reset();
  };
  const flush = setInterval(() => {
    const { heapUsed, external, arrayBuffers } = process.memoryUsage();
    send({ type: 'memory', heapUsed, external: external + arrayBuffers });
    if (report.commits.length + report.transactions.length + report.aborted.length + report.fetches.length === 0)
      return;
    report.requests.at = Date.now();
    takeLoopDelay();
    send(report);
    report = emptyReport();
  }, 250);

  process.on('message', (m: ChildMessage) => {
    if (m.type === 'sweep') {
      const s = m as SweepCommand;
      const current = new InLoopSweep({
        sweepId: s.sweepId,
        condition: DORMANCY_SWEEP.condition,
        action: DORMANCY_SWEEP.action,
        asOf: s.asOf,
        keysPerSlice: s.keysPerSlice ?? Infinity,
        // The chunked sweep is a wall-clock punctuator: one slice per task per 100 ms at most.
        sliceEveryMs: s.keysPerSlice === null ? 0 : 100,
        tasks: processor.tasks.owned,
      });
      const state: SweepState = { run: current, armedAt: Date.now(), target: new Map(), reported: false };
      sweep = state;
      void current.done.then(() => {
        if (sweep !== state) return;
        state.walkedAt = Date.now();
        sweepCommitted();
      });
    } else if (m.type === 'metric') {
      // One metric of the processor's registry (what its /metrics would show), by name.
      const name = String(m.name);
      void Promise.resolve(metrics.registry.getSingleMetric(name)?.get()).then((got) =>
        send({ type: 'metric', name, values: got?.values.map((v) => ({ labels: v.labels, value: v.value })) ?? null }),
      );
    } else if (m.type === 'stop') {
      clearInterval(flush);
      void processor.stop().then(async () => {
        await app?.close().catch(() => undefined);
        report.requests.at = Date.now();
        takeLoopDelay();
        send(report);
        send({ type: 'stopped' });
        setTimeout(() => process.exit(0), 50);
      });
    }
  });

  await processor.start();
  // The tasks it owns and those RUNNING, whenever they change: with several instances no single
  // one owns every task, and a failover is seen task by task.
  let lastTasks = '';
  const tasks = setInterval(() => {
    const owned = processor.tasks.owned;
    const running = owned.filter((t) => processor.tasks.stateOf(t) === 'RUNNING');
    const now = JSON.stringify([owned, running]);
    if (now === lastTasks) return;
    lastTasks = now;
    send({ type: 'tasks', at: Date.now(), owned, running });
  }, 20);
  tasks.unref();
  const ready = setInterval(() => {
    if (processor.isReady && processor.tasks.owned.length === cfg.partitions) {
      clearInterval(ready);
      send({ type: 'ready', at: Date.now() });
    }
  }, 20);
});

function emptyReport(): CommitsReport {
  return {
    type: 'commits',
    commits: [],
    latency: [],
    commandLatency: [],
    transactions: [],
    aborted: [],
    requests: { at: 0, byApi: {} },
    fetches: [],
    loopDelay: { at: 0, p99: 0, max: 0 },
  };
}
