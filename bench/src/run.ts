import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { probeBroker } from './broker-probe';
import { killAllChildren } from './ipc';
import { kafkajs, startKafka, startKafkaCluster, type Admin, type Kafka } from './lib';
import { describeMachine, describeSource, type Machine } from './machine';
import { parseOptions, UsageError, type BenchOptions } from './options';
import { judgeTargets, resultsMarkdown, writeDocs, type BenchReport, type PartRun } from './report';
import { loadReference } from './reference';
import { compareSweeps } from './sweeps';
import { log } from './common';
import { measureThroughput } from './throughput';
import { measureRestorePart } from './restore/index';
import { compareModes } from './eos-modes';
import { currentLoad, judgeModesTargets, modesMarkdown, writeModesDocs, type ModesReport } from './eos-modes-report';
import { judgeRestoreTargets, restoreMarkdown, writeRestoreDocs, type RestoreReport } from './restore/report';
import { measureClusterPart, type BrokerTarget } from './cluster/index';
import { KILL_AFTER_SEC } from './cluster/broker-kill';
import { clusterMarkdown, writeClusterDocs, type ClusterReport } from './cluster/report';
import { measureBudgetPart } from './budget';
import { budgetMarkdown, judgeBudgetPart, writeBudgetDocs, type BudgetReport } from './budget-report';
import { budgetChart, latencyChart, paceChart } from './svg';

const ROOT = resolve(__dirname, '../..');

/**
 * `pnpm bench`: one broker container for the whole run; part 1 (throughput, raw ceiling,
 * restore), part 2 (the three sweeps), then the table, docs/benchmarks/latest.json,
 * docs/benchmarks/latency.svg and the results block of docs/benchmarks.md; part 3 (restore,
 * catch-up and memory of a large state, failover), then its tables, docs/benchmarks/restore.json
 * and its block of docs/benchmarks.md; part 4 (exactly-once v1 and v2); part 5 (the same broker next
 * to a three-broker cluster it starts, and broker kills); part 6 (issue 32: relay sweeps under latency
 * budgets next to the chunked in-loop sweep). `--part` picks one.
 */
async function main(o: BenchOptions): Promise<void> {
  const machine = describeMachine();
  if (machine.loadAverageAtStart > machine.cpus) {
    log(
      `the load average is ${machine.loadAverageAtStart} on ${machine.cpus} CPUs: other work is running, the figures will be noisy`,
    );
  }
  log(`starting the broker (${machine.kafkaImage})`);
  const broker = await startKafka();
  // Interrupted: leave nothing running (children, the broker container, part 5's cluster).
  const containers: Array<() => Promise<unknown>> = [() => broker.stop()];
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping the children and the containers`);
      killAllChildren();
      void Promise.allSettled(containers.map((stop) => stop())).finally(() => process.exit(130));
    });
  }
  const workDir = mkdtempSync(join(tmpdir(), 'state-relay-bench-'));
  const kafka = new kafkajs.Kafka({ clientId: 'bench', brokers: broker.brokers, logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  try {
    await admin.connect();
    if (o.parts.includes('main')) await mainParts(kafka, admin, broker.brokers, o, workDir, machine);
    if (o.parts.includes('restore')) await restorePart(kafka, admin, broker.brokers, o, workDir, machine);
    if (o.parts.includes('modes')) await modesPart(kafka, admin, broker.brokers, o, workDir, machine);
    if (o.parts.includes('cluster'))
      await clusterPart({ kafka, admin, brokers: broker.brokers }, o, workDir, machine, containers);
    if (o.parts.includes('budget')) await budgetPart(kafka, admin, broker.brokers, o, workDir, machine);
  } finally {
    killAllChildren();
    await admin.disconnect().catch(() => undefined);
    await broker.stop().catch(() => undefined);
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** Parts 1 and 2: their table, latest.json, latency.svg and the results block of docs/benchmarks.md. */
async function mainParts(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  o: BenchOptions,
  workDir: string,
  machine: Machine,
): Promise<void> {
  const started = Date.now();
  log('broker round trips');
  const probe = await probeBroker(kafka, admin);
  const throughput = await measureThroughput(kafka, admin, brokers, o, workDir);
  const sweeps = await compareSweeps(kafka, admin, brokers, o, workDir);
  const reference = loadReference(ROOT);
  const report: BenchReport = {
    machine,
    options: o,
    durationSec: Math.round((Date.now() - started) / 1000),
    broker: probe,
    throughput,
    sweeps,
    ...(reference ? { reference } : {}),
    targets: judgeTargets(throughput, sweeps, reference),
  };
  process.stdout.write(`\n${resultsMarkdown(report)}\n\n`);
  for (const [name, profile] of Object.entries(throughput.profile ?? {})) {
    if (!profile) continue;
    process.stdout.write(
      `CPU profile of the processor, ${name === 'eos' ? 'throughput run' : 'restore'} (self time):\n`,
    );
    for (const a of profile.byArea) process.stdout.write(`  ${String(a.percent).padStart(5)} %  ${a.area}\n`);
    for (const f of profile.topFunctions) process.stdout.write(`  ${String(f.percent).padStart(5)} %  ${f.fn}\n`);
  }
  const svg = latencyChart(
    sweeps.results,
    sweeps.rounds,
    `${sweeps.keys.toLocaleString('en-US')} keys, ${sweeps.rate.toLocaleString('en-US')} events/s steady load, ${machine.cpus} CPUs, ${machine.date.slice(0, 10)}`,
  );
  if (o.writeDocs) {
    writeDocs(ROOT, report, svg);
    log('wrote docs/benchmarks.md, docs/benchmarks/latest.json and docs/benchmarks/latency.svg');
  } else {
    const out = join(tmpdir(), 'state-relay-bench-latest.json');
    writeFileSync(out, JSON.stringify(report, null, 1));
    writeFileSync(out.replace(/json$/, 'svg'), svg);
    log(`--no-docs: wrote ${out} and the chart next to it`);
  }
  if (!sweeps.sameFinalState || !throughput.eos.stateMatchesOracle) process.exitCode = 1;
}

/** Part 3 (issue 13): its tables, docs/benchmarks/restore.json and the bench:restore block of docs/benchmarks.md. */
async function restorePart(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  o: BenchOptions,
  workDir: string,
  machine: Machine,
): Promise<void> {
  log(
    `part 3: restore, catch-up and memory of ${o.restoreKeys.toLocaleString('en-US')} keys` +
      `${o.restoreBaseKeys > 0 ? ` and of ${o.restoreBaseKeys.toLocaleString('en-US')}` : ''}, command-id bytes, failover ` +
      '(with 1,000,000 keys it took 17 min on the 2 shared cores at a load average of 21; --part main skips it)',
  );
  const result = await measureRestorePart(kafka, admin, brokers, o, workDir);
  log(`part 3 took ${(result.durationSec / 60).toFixed(1)} min`);
  const report: RestoreReport = {
    machine,
    source: describeSource(ROOT),
    command: ['pnpm bench', ...process.argv.slice(2)].join(' '),
    options: {
      restoreKeys: o.restoreKeys,
      restoreBaseKeys: o.restoreBaseKeys,
      failoverKeys: o.failoverKeys,
      partitions: o.partitions,
      processorEnv: o.processorEnv,
      scannerNice: o.scannerNice,
      restoreLabel: o.restoreLabel,
    },
    result,
    targets: judgeRestoreTargets(result),
  };
  publish(o, 'restore', restoreMarkdown(report), report, () => writeRestoreDocs(ROOT, report));
  if (!result.ok) process.exitCode = 1;
}

/** A part's table on stdout, then its docs (docs/benchmarks/<name>.json and its block) or, with --no-docs, a temp file. */
function publish(o: BenchOptions, name: string, markdown: string, report: object, writeDocs: () => void): void {
  process.stdout.write(`\n${markdown}\n\n`);
  if (o.writeDocs) {
    writeDocs();
    log(`wrote docs/benchmarks/${name}.json and the bench:${name} block of docs/benchmarks.md`);
  } else {
    const out = join(tmpdir(), `state-relay-bench-${name}.json`);
    writeFileSync(out, JSON.stringify(report, null, 1));
    log(`--no-docs: wrote ${out}`);
  }
}

/** Part 4 (issue 22): its tables, docs/benchmarks/modes.json and the bench:modes block of docs/benchmarks.md. */
async function modesPart(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  o: BenchOptions,
  workDir: string,
  machine: Machine,
): Promise<void> {
  const started = Date.now();
  const loadStart = currentLoad();
  log(
    `part 4: exactly-once v1 and v2 side by side at ${o.rate} events/s on ${o.modesPartitions.join(' and ')} partitions, then the backlog per mode`,
  );
  const result = await compareModes(kafka, admin, brokers, o, workDir);
  const report: ModesReport = {
    ...partRun(machine, started, loadStart),
    result,
    targets: judgeModesTargets(result),
  };
  log(`part 4 took ${(report.durationSec / 60).toFixed(1)} min`);
  publish(o, 'modes', modesMarkdown(report), report, () => writeModesDocs(ROOT, report));
  if (!result.ok) process.exitCode = 1;
}

/** Part 5 (issue 23): its tables, docs/benchmarks/cluster.json and the bench:cluster block of docs/benchmarks.md. */
async function clusterPart(
  single: BrokerTarget,
  o: BenchOptions,
  workDir: string,
  machine: Machine,
  containers: Array<() => Promise<unknown>>,
): Promise<void> {
  const started = Date.now();
  const loadStart = currentLoad();
  log(
    `part 5: one broker next to three (RF 3, min ISR 2): throughput of ${o.clusterEvents} events, a relay sweep of ` +
      `${o.clusterKeys} keys on each; then on the cluster the changelog leader and the transaction coordinator killed -9 ` +
      `during a sweep, each down ${o.clusterDownSec} s; starting the three-node cluster`,
  );
  const cluster = await startKafkaCluster();
  containers.push(() => cluster.stop());
  const kafka = new kafkajs.Kafka({
    clientId: 'bench-cluster',
    brokers: cluster.brokers,
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const result = await measureClusterPart(
      single,
      { kafka, admin, brokers: cluster.brokers, killer: cluster },
      o,
      workDir,
    );
    const report: ClusterReport = {
      ...partRun(machine, started, loadStart),
      killAfterSec: KILL_AFTER_SEC,
      downSec: o.clusterDownSec,
      result,
    };
    log(`part 5 took ${(report.durationSec / 60).toFixed(1)} min`);
    publish(o, 'cluster', clusterMarkdown(report), report, () => writeClusterDocs(ROOT, report));
    if (!result.ok) process.exitCode = 1;
  } finally {
    killAllChildren();
    await admin.disconnect().catch(() => undefined);
    await cluster.stop().catch((err: Error) => log(`stopping the cluster failed: ${err.message}`));
  }
}

/** Part 6 (issue 32): its table and verdicts, docs/benchmarks/budget.json|svg, budget-pace.svg and the bench:budget block. */
async function budgetPart(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  o: BenchOptions,
  workDir: string,
  machine: Machine,
): Promise<void> {
  const started = Date.now();
  const loadStart = currentLoad();
  log(
    `part 6: latency budgets at ${o.keys.toLocaleString('en-US')} keys and ${o.rate} events/s: the chunked in-loop sweep, ` +
      `then uncapped relay sweeps under ${o.budgets.join(', ')}`,
  );
  const result = await measureBudgetPart(kafka, admin, brokers, o, workDir);
  const report: BudgetReport = { ...partRun(machine, started, loadStart), result, verdicts: judgeBudgetPart(result) };
  log(`part 6 took ${(report.durationSec / 60).toFixed(1)} min`);
  const subtitle = `${result.keys.toLocaleString('en-US')} keys, ${result.rate.toLocaleString('en-US')} events/s steady load, ${machine.cpus} CPUs, ${report.startedAt.slice(0, 10)}`;
  const charts = {
    budget: budgetChart(result.chunked, result.relays, subtitle),
    pace: paceChart(result.relays, subtitle),
  };
  publish(o, 'budget', budgetMarkdown(report), report, () => writeBudgetDocs(ROOT, report, charts));
  if (!o.writeDocs) {
    const out = join(tmpdir(), 'state-relay-bench-budget');
    writeFileSync(`${out}.svg`, charts.budget);
    writeFileSync(`${out}-pace.svg`, charts.pace);
    log(`--no-docs: wrote ${out}.svg and ${out}-pace.svg`);
  }
  if (!result.sameFinalState) process.exitCode = 1;
}

/** The part that began at `started` (epoch ms), at load average `loadStart`, and ends now. */
function partRun(machine: Machine, started: number, loadStart: number): PartRun {
  return {
    machine,
    source: describeSource(ROOT),
    command: ['pnpm bench', ...process.argv.slice(2)].join(' '),
    startedAt: new Date(started).toISOString(),
    durationSec: Math.round((Date.now() - started) / 1000),
    loadAverage: { start: loadStart, end: currentLoad() },
  };
}

let options: BenchOptions;
try {
  options = parseOptions(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  const help = process.argv.includes('--help') || process.argv.includes('-h');
  (help ? process.stdout : process.stderr).write(`${err.message}\n`);
  process.exit(help ? 0 : 2);
}
main(options).catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
