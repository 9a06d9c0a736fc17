import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AS_OF, log } from './common';
import { brokerPid, cpuBetween, snapshot, type CpuUse } from './cpu';
import { createDeploymentTopics, newDeployment, produceAll, waitCommittedToEnd } from './deployment';
import { Child } from './ipc';
import { accountsOracle, encodeEvent, generateAccountEvents, type Admin, type Kafka, type LatencySummary } from './lib';
import type { BenchOptions } from './options';
import { ProcessorRun } from './processor-run';
import { summarizeProfile, type ProfileSummary } from './profile';
import type { TransactionSummary } from './stats';
import { checkState, readStores } from './verify';

export interface ThroughputResult {
  events: number;
  accounts: number;
  partitions: number;
  produceMs: number;
  raw: { eventsPerSec: number; batchMs: LatencySummary; peakRssBytes?: number; cpu: CpuUse };
  eos: {
    eventsPerSec: number;
    /** Spawn of the process to every offset committed: start, group join, fencing and restore included. */
    wallMs: number;
    /** Each unit's transaction, begin to Kafka commit (processor_commit_duration_seconds), and its SQLite flush. */
    commitMs: LatencySummary;
    flushMs: LatencySummary;
    /** Events per transaction that carried events. */
    recordsPerTransaction: number;
    transactions: number;
    /** Committed transactions per second per task, from every task RUNNING to the last commit. */
    transactionsPerTaskSec: number;
    /** Where a transaction's time went (ms): total, sendBatch, sendOffsets, commit. */
    transactionMs: { total: LatencySummary; send: LatencySummary; offsets: LatencySummary; commit: LatencySummary };
    /** Everything the commit log says about the run's transactions (requests per transaction, fetch loop). */
    transactionSummary: TransactionSummary;
    peakRssBytes?: number;
    /** Highest JS heap and Buffer/ArrayBuffer bytes seen (sampled every 250 ms). */
    memory: { heapUsed: number; external: number };
    stateMatchesOracle: boolean;
    /** Warnings the processor logged, by message. */
    warnings: Record<string, number>;
    cpu: CpuUse;
  };
  ratio: number;
  restore: {
    records: number;
    ms: number;
    recordsPerSec: number;
    readyMs: number;
    peakRssBytes?: number;
    memory: { heapUsed: number; external: number };
  };
  /** With --profile: where the processor's CPU time went, in the throughput run and in the restore. */
  profile?: { eos?: ProfileSummary; restore?: ProfileSummary };
}

/**
 * Part 1: the processor at full speed over pre-produced input, next to the raw ceiling of
 * the same broker and client over the same input; then a restore from the changelog alone.
 */
export async function measureThroughput(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  o: BenchOptions,
  workDir: string,
): Promise<ThroughputResult> {
  const d = newDeployment('tput', o.partitions, workDir, o.topicReplication);
  const rawOut = `${d.appId}-raw-out`;
  await createDeploymentTopics(admin, d, [rawOut]);

  const accounts = Math.ceil(o.throughputEvents / o.eventsPerAccount);
  const events = generateAccountEvents({
    accounts,
    eventsPerAccount: o.eventsPerAccount,
    seed: 42,
    now: AS_OF,
    dormantFraction: 0.3,
  });
  log(`throughput: producing ${events.length} events (${accounts} accounts) to ${o.partitions} partitions`);
  const produceMs = await produceAll(
    kafka,
    d.eventsTopic,
    events.map(({ key, event }) => ({ key, value: encodeEvent(event) })),
  );

  log('throughput: raw consume->produce pipeline (no state, no transactions)');
  const broker = brokerPid(brokers[0]!);
  const raw = Child.start('raw', 'raw-child', {
    brokers,
    groupId: `${d.appId}-raw`,
    inputTopic: d.eventsTopic,
    outputTopic: rawOut,
    expect: events.length,
  });
  const rawBefore = snapshot({ pipeline: raw.pid, broker });
  const rawDone = await raw.next<{
    type: 'done';
    joinedAt: number;
    firstAt: number;
    firstRecords: number;
    lastAt: number;
    copied: number;
    batchMs: LatencySummary;
  }>('done');
  const rawCpu = cpuBetween(rawBefore, snapshot({ pipeline: raw.pid, broker }));
  const rawPeak = raw.peakRss();
  await raw.stop();
  // Both pipelines: from the moment they can consume (raw: group joined; exactly-once: every
  // task RUNNING, fenced and restored) to their last record done (produced / committed).
  const rawRate = rate(rawDone.copied, rawDone.lastAt - rawDone.joinedAt);

  log('throughput: processor with exactly-once');
  const eosProfile = profiling(o);
  const eos = new ProcessorRun(brokers, d, o, eosProfile.execArgv);
  const eosBefore = snapshot({ processor: eos.child.pid, broker });
  const eosReady = eos.ready();
  const caughtUp = await waitCommittedToEnd(admin, d.appId, [d.eventsTopic]);
  const eosCpu = cpuBetween(eosBefore, snapshot({ processor: eos.child.pid, broker }));
  log(`throughput: caught up after ${caughtUp - eos.spawnedAt} ms; ${eos.log.events} events reported so far`);
  const eosPeak = await eos.stop();
  log(`throughput: ${eos.log.events} events reported after stop`);
  const { log: commits } = eos;
  const order = commits.eventCommits();
  if (order.length < 2) throw new Error(`throughput: the processor reported ${order.length} commits with events`);
  const last = order.at(-1)!;
  const eosReadyAt = await eosReady;
  const eosRate = rate(commits.events, last.committedAt - eosReadyAt);
  const tx = commits.transactionsBetween(eosReadyAt, last.committedAt + 1, eos.tasks);
  const state = checkState(readStores(d.stateDir, d.partitions), accountsOracle(events));
  if (!state.ok) log(`throughput: the state differs from the oracle: ${JSON.stringify(state)}`);

  log('throughput: restore from the changelog into an empty state directory');
  rmSync(d.stateDir, { recursive: true, force: true });
  const restoreProfile = profiling(o);
  const restoring = new ProcessorRun(brokers, d, o, restoreProfile.execArgv);
  const readyAt = await restoring.ready();
  const restorePeak = await restoring.stop();
  const profile = o.profile ? { eos: eosProfile.summary(), restore: restoreProfile.summary() } : undefined;
  const restored = restoring.restored;

  return {
    events: events.length,
    accounts,
    partitions: o.partitions,
    produceMs,
    raw: { eventsPerSec: rawRate, batchMs: rawDone.batchMs, peakRssBytes: rawPeak, cpu: rawCpu },
    eos: {
      eventsPerSec: eosRate,
      wallMs: caughtUp - eos.spawnedAt,
      commitMs: tx.commitMs,
      flushMs: tx.flushMs,
      recordsPerTransaction: commits.events / Math.max(1, order.length),
      transactions: commits.commits.length,
      transactionsPerTaskSec: tx.perTask.mean,
      transactionMs: (({ total, send, offsets, commit }) => ({ total, send, offsets, commit }))(
        commits.transactionsBetween(0, Date.now() + 1, eos.tasks),
      ),
      transactionSummary: tx,
      peakRssBytes: eosPeak,
      memory: eos.memory,
      stateMatchesOracle: state.ok,
      cpu: eosCpu,
      warnings: eos.warnings,
    },
    ratio: eosRate / rawRate,
    restore: {
      records: restored.records,
      ms: restored.ms,
      recordsPerSec: rate(restored.records, restored.ms),
      readyMs: readyAt - restoring.spawnedAt,
      peakRssBytes: restorePeak,
      memory: restoring.memory,
    },
    ...(profile ? { profile } : {}),
  };
}

/** --cpu-prof for one processor child, when --profile asked for it; summary() reads and removes the profile. */
function profiling(o: BenchOptions): { execArgv: string[]; summary: () => ProfileSummary | undefined } {
  if (!o.profile) return { execArgv: [], summary: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), 'bench-prof-'));
  return {
    execArgv: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    summary: () => {
      const summary = summarizeProfile(dir);
      rmSync(dir, { recursive: true, force: true });
      return summary;
    },
  };
}

function rate(n: number, ms: number): number {
  return ms > 0 ? (n * 1000) / ms : NaN;
}
