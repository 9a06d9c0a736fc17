import type { LoadChildConfig } from './children/load-child';
import { AS_OF, log } from './common';
import { brokerPid, cpuBetween, snapshot, type CpuUse } from './cpu';
import { createDeploymentTopics, newDeployment, produceAll, waitCommittedToEnd } from './deployment';
import { Child } from './ipc';
import {
  accountsOracle,
  generateAccountEvents,
  type Admin,
  type JsonObject,
  type Kafka,
  type LatencySummary,
} from './lib';
import type { BenchOptions } from './options';
import { ProcessorRun } from './processor-run';
import { summarize } from './stats';
import type { SteadyLoadSpec } from './steady-load';
import { loadedState } from './sweep-oracle';
import { encodeFreshEntity } from './stored-entity';
import { measureThroughput } from './throughput';
import { checkState, readStores } from './verify';

export type EosMode = 'v1' | 'v2';
export const EOS_MODES: readonly EosMode[] = ['v1', 'v2'];

/** One mode at the steady load on one partition count. */
export interface SteadyModeResult {
  mode: EosMode;
  partitions: number;
  /** The measured window (s) and the events committed in it. */
  windowSec: number;
  eventsPerSec: number;
  /** Kafka transactions committed per second (kafkajs level: v1 one per task unit, v2 one per cycle). */
  transactionsPerSec: number;
  /** Units of work committed per second, all tasks together (v2: several in one transaction). */
  unitsPerSec: number;
  /** Requests the transactional producers sent per second, all APIs, and by API. */
  producerRequestsPerSec: number;
  requestsByApi: Record<string, number>;
  /** The processor consumer's fetches per second. */
  fetchesPerSec: number;
  /** Produce -> commit of every event committed in the window. */
  eventCommitMs: LatencySummary;
  /** transaction() -> commit resolved, kafkajs level. */
  transactionMs: LatencySummary;
  /** Processor and broker CPU (cores) over the window. */
  cpu: CpuUse;
  stateMatchesOracle: boolean;
  warnings: Record<string, number>;
}

/** The backlog run of part 1 for one mode, next to the raw pipeline measured just before it. */
export interface BacklogModeResult {
  mode: EosMode;
  eventsPerSec: number;
  rawEventsPerSec: number;
  ratio: number;
  transactions: number;
  eventsPerTransaction: number;
  transactionMs: LatencySummary;
  sendMs: LatencySummary;
  stateMatchesOracle: boolean;
}

export interface ModesComparison {
  rate: number;
  keys: number;
  windowSec: number;
  commitIntervalMs: number;
  steady: SteadyModeResult[];
  backlog: BacklogModeResult[];
  /** Every run ended in the oracle's state. */
  ok: boolean;
}

/**
 * Part 4 (issue 22): exactly-once v1 (a transaction per task) and v2 (one per instance) side by
 * side on the same broker, in one run: at the steady load on `modesPartitions` partition counts
 * (the order of the modes alternates from one count to the next), then part 1's backlog run once
 * per mode, each with its own raw pipeline just before it.
 */
export async function compareModes(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  o: BenchOptions,
  workDir: string,
): Promise<ModesComparison> {
  const seed = accountsOracle(
    generateAccountEvents({ accounts: o.modesKeys, eventsPerAccount: 2, seed: 5, now: AS_OF, dormantFraction: 0.3 }),
  );
  const seedMessages = [...seed].map(([key, value]) => ({ key, value: encodeFreshEntity(1, value) }));
  const spec: SteadyLoadSpec = { seed: 13, keys: o.modesKeys, asOf: AS_OF };
  const steady: SteadyModeResult[] = [];
  for (const [i, partitions] of o.modesPartitions.entries()) {
    const order = i % 2 === 0 ? EOS_MODES : [...EOS_MODES].reverse();
    for (const mode of order)
      steady.push(await steadyRun(mode, partitions, { kafka, admin, brokers, o, workDir, seed, seedMessages, spec }));
  }
  const backlog: BacklogModeResult[] = [];
  for (const mode of EOS_MODES) {
    log(`modes: backlog of ${o.throughputEvents} events under EXACTLY_ONCE=${mode}`);
    const t = await measureThroughput(
      kafka,
      admin,
      brokers,
      { ...o, profile: false, processorEnv: { ...o.processorEnv, EXACTLY_ONCE: mode } },
      workDir,
    );
    backlog.push({
      mode,
      eventsPerSec: t.eos.eventsPerSec,
      rawEventsPerSec: t.raw.eventsPerSec,
      ratio: t.ratio,
      transactions: t.eos.transactionSummary.total.count,
      eventsPerTransaction: t.events / Math.max(1, t.eos.transactionSummary.total.count),
      transactionMs: t.eos.transactionSummary.total,
      sendMs: t.eos.transactionSummary.send,
      stateMatchesOracle: t.eos.stateMatchesOracle,
    });
  }
  return {
    rate: o.rate,
    keys: o.modesKeys,
    windowSec: o.modesSec,
    commitIntervalMs: Number(o.processorEnv.COMMIT_INTERVAL_MS ?? 100),
    steady,
    backlog,
    ok: steady.every((s) => s.stateMatchesOracle) && backlog.every((b) => b.stateMatchesOracle),
  };
}

interface Shared {
  kafka: Kafka;
  admin: Admin;
  brokers: string[];
  o: BenchOptions;
  workDir: string;
  seed: Map<string, JsonObject>;
  seedMessages: Array<{ key: string; value: Buffer }>;
  spec: SteadyLoadSpec;
}

async function steadyRun(mode: EosMode, partitions: number, s: Shared): Promise<SteadyModeResult> {
  const { kafka, admin, brokers, o } = s;
  const name = `${mode}-${partitions}p`;
  const d = newDeployment(`modes-${name}`, partitions, s.workDir);
  await createDeploymentTopics(admin, d);
  await produceAll(kafka, d.changelogTopic, s.seedMessages);
  const proc = new ProcessorRun(brokers, d, {
    ...o,
    eventLatencies: true,
    processorEnv: { ...o.processorEnv, EXACTLY_ONCE: mode, INSTANCE_ID: 'bench' },
  });
  let load: Child | undefined;
  try {
    await proc.ready();
    const loadConfig: LoadChildConfig = { brokers, topic: d.eventsTopic, rate: o.rate, spec: s.spec };
    load = Child.start('load', 'load-child', loadConfig);
    await load.next('started');
    log(`modes ${name}: steady load of ${o.rate} events/s, ${o.warmupSec} s warm-up, ${o.modesSec} s measured`);
    await sleep(o.warmupSec * 1000);
    const pids = { processor: proc.child.pid, broker: brokerPid(brokers[0]!) };
    const from = Date.now();
    const before = snapshot(pids);
    await sleep(o.modesSec * 1000);
    const to = Date.now();
    const cpu = cpuBetween(before, snapshot(pids));
    const total = Math.ceil(o.rate * (o.warmupSec + o.modesSec + 2));
    load.send({ type: 'finish', total });
    const finished = await load.next<{ type: 'finished'; count: number }>('finished');
    await waitCommittedToEnd(admin, d.appId, [d.eventsTopic]);
    await load.stop();
    await proc.stop();
    const sec = (to - from) / 1000;
    const txs = proc.log.transactions.filter((t) => t.endedAt >= from && t.endedAt < to);
    const summary = proc.log.transactionsBetween(from, to, proc.tasks);
    const requestsByApi: Record<string, number> = {};
    for (const r of summary.requests) requestsByApi[r.api] = (r.perTransaction * txs.length) / sec;
    const check = checkState(readStores(d.stateDir, d.partitions), loadedState(s.seed, s.spec, finished.count));
    if (!check.ok) log(`modes ${name}: the state differs from the oracle: ${JSON.stringify(check)}`);
    const result: SteadyModeResult = {
      mode,
      partitions,
      windowSec: sec,
      eventsPerSec: proc.log.eventsBetween(from, to) / sec,
      transactionsPerSec: txs.length / sec,
      unitsPerSec: summary.perSec,
      producerRequestsPerSec: Object.values(requestsByApi).reduce((a, b) => a + b, 0),
      requestsByApi,
      fetchesPerSec: summary.fetch.perSec,
      eventCommitMs: summarize(proc.log.latenciesBetween(from, to)),
      transactionMs: summary.total,
      cpu,
      stateMatchesOracle: check.ok,
      warnings: proc.warnings,
    };
    log(
      `modes ${name}: ${result.transactionsPerSec.toFixed(1)} transactions/s, ${result.producerRequestsPerSec.toFixed(0)} producer requests/s, ` +
        `event commit p50 ${result.eventCommitMs.p50} / p99 ${result.eventCommitMs.p99} ms; state ${check.ok ? 'matches' : 'DIFFERS FROM'} the oracle`,
    );
    return result;
  } finally {
    load?.kill();
    proc.child.kill();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
