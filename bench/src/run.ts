import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { probeBroker } from './broker-probe';
import { killAllChildren } from './ipc';
import { kafkajs, startKafka } from './lib';
import { describeMachine } from './machine';
import { parseOptions, UsageError, type BenchOptions } from './options';
import { judgeTargets, resultsMarkdown, writeDocs, type BenchReport } from './report';
import { loadReference } from './reference';
import { compareSweeps } from './sweeps';
import { latencyChart } from './svg';
import { log } from './common';
import { measureThroughput } from './throughput';

const ROOT = resolve(__dirname, '../..');

/**
 * `pnpm bench`: one broker container for the whole run; part 1 (throughput, raw ceiling,
 * restore), part 2 (the three sweeps); then the table, docs/benchmarks/latest.json,
 * docs/benchmarks/latency.svg and the results block of docs/benchmarks.md.
 */
async function main(o: BenchOptions): Promise<void> {
  const started = Date.now();
  const machine = describeMachine();
  if (machine.loadAverageAtStart > machine.cpus) {
    log(
      `the load average is ${machine.loadAverageAtStart} on ${machine.cpus} CPUs: other work is running, the figures will be noisy`,
    );
  }
  log(`starting the broker (${machine.kafkaImage})`);
  const broker = await startKafka();
  // Interrupted: leave nothing running (children, the broker container).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping the children and the broker`);
      killAllChildren();
      void broker.stop().finally(() => process.exit(130));
    });
  }
  const workDir = mkdtempSync(join(tmpdir(), 'state-relay-bench-'));
  const kafka = new kafkajs.Kafka({ clientId: 'bench', brokers: broker.brokers, logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  try {
    await admin.connect();
    log('broker round trips');
    const probe = await probeBroker(kafka, admin);
    const throughput = await measureThroughput(kafka, admin, broker.brokers, o, workDir);
    const sweeps = await compareSweeps(kafka, admin, broker.brokers, o, workDir);
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
      await writeDocs(ROOT, report, svg);
      log('wrote docs/benchmarks.md, docs/benchmarks/latest.json and docs/benchmarks/latency.svg');
    } else {
      const out = join(tmpdir(), 'state-relay-bench-latest.json');
      writeFileSync(out, JSON.stringify(report, null, 1));
      writeFileSync(out.replace(/json$/, 'svg'), svg);
      log(`--no-docs: wrote ${out} and the chart next to it`);
    }
    if (!sweeps.sameFinalState || !throughput.eos.stateMatchesOracle) process.exitCode = 1;
  } finally {
    killAllChildren();
    await admin.disconnect().catch(() => undefined);
    await broker.stop().catch(() => undefined);
    rmSync(workDir, { recursive: true, force: true });
  }
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
