import { lastRunLine, n, writePartDocs, type PartRun } from '../report';
import type { BrokerKill } from './broker-kill';
import type { ClusterPartResult } from './index';
import type { SideResult } from './figures';

/** What docs/benchmarks/cluster.json holds: one run of part 5 and where it ran. */
export interface ClusterReport extends PartRun {
  /** Seconds into the sweep at which the broker is killed, and seconds it stays down. */
  killAfterSec: number;
  downSec: number;
  result: ClusterPartResult;
}

const s1 = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : '–');
const ratio = (cluster: number, single: number) =>
  Number.isFinite(cluster / single) && single !== 0 ? (cluster / single).toFixed(2) : '–';
const yes = (ok: boolean) => (ok ? 'yes' : '**no**');

export function clusterMarkdown(report: ClusterReport): string {
  const { result: r, machine: m } = report;
  const row = (label: string, f: (x: SideResult) => number, show: (v: number) => string = n) =>
    `| ${label} | ${show(f(r.single))} | ${show(f(r.cluster))} | ${ratio(f(r.cluster), f(r.single))} |`;
  const both = (label: string, f: (x: SideResult) => boolean) =>
    `| ${label} | ${yes(f(r.single))} | ${yes(f(r.cluster))} | |`;
  const tasks = [...new Set(r.kills.flatMap((k) => k.gaps.map((g) => g.task)))].sort((a, b) => a - b);
  const gapOf = (k: BrokerKill, task: number) => {
    const g = k.gaps.find((x) => x.task === task);
    if (!g) return '–';
    const since = g.from - k.killedAt;
    return `${s1(g.ms)} (${since < 0 ? '−' : '+'}${s1(Math.abs(since))})${g.open ? ', open' : ''}`;
  };
  return [
    lastRunLine(report),
    '',
    `**Machine.** ${m.cpus} CPUs, Node ${m.node}, kafkajs ${m.kafkajs}, image \`${m.kafkaImage}\` for the single broker and ` +
      `for each of the cluster's three nodes, all on the same machine; 1-minute load average ${report.loadAverage.start} ` +
      `at the start of this part, ${report.loadAverage.end} at its end` +
      `${Math.max(report.loadAverage.start, report.loadAverage.end) > m.cpus ? ' (above the CPU count: other work competed)' : ''}.`,
    '',
    `#### One broker and three (RF 3, acks=all, min ISR 2), same run: ${n(r.events)} events, ${n(r.keys)} keys, ${r.partitions} partitions`,
    '',
    '| figure | single broker | three-broker cluster | cluster / single |',
    '| --- | ---: | ---: | ---: |',
    row('exactly-once (v2) throughput, events/s', (x) => x.throughput.eventsPerSec),
    row('raw pipeline, events/s', (x) => x.throughput.rawEventsPerSec),
    row('Kafka transaction p99 (ms), throughput run', (x) => x.throughput.transactionMs.p99),
    row(
      `restore of the throughput run's ${n(r.single.restore.records)} records, records/s`,
      (x) => x.restore.recordsPerSec,
    ),
    row(`restore of the sweep's seeded ${n(r.keys)} keys (ms)`, (x) => x.sweep.restore.ms),
    row('relay sweep duration (s)', (x) => x.sweep.sweepMs, s1),
    row('relay commands/s during the sweep', (x) => x.sweep.commandsPerSec),
    row(`events/s committed during the sweep (load ${n(r.rate)}/s)`, (x) => x.sweep.eventsPerSecDuring),
    row('event commit p99 (ms), baseline', (x) => x.sweep.eventCommitMs.baseline.p99),
    row('event commit p99 (ms), during the sweep', (x) => x.sweep.eventCommitMs.during.p99),
    row('longest task stall during the sweep (ms)', (x) => x.sweep.longestTaskStallMs),
    both('throughput run: state = oracle', (x) => x.throughput.stateMatchesOracle),
    both('sweep: state = oracle', (x) => x.sweep.stateMatchesOracle),
    '',
    `#### A broker killed -9 during a relay sweep on the cluster (${report.killAfterSec} s into the sweep, started again ${report.downSec} s later)`,
    '',
    '| node killed | what it was | started again after (s) | answers after (s) | every ISR complete after (s) | sweep (s) | commands/s | event commit p99 during (ms) | longest gap, any task (s) | failed transactions | load events written twice | state = oracle |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...r.kills.map(
      (k) =>
        `| ${k.role}: node ${k.victim} | ${k.victimRoles} | ${s1(k.downMs)} | ${s1(k.killToAnswerMs)} | ${s1(k.killToIsrsCompleteMs)} | ` +
        `${s1(k.sweep.sweepMs)} | ${n(k.sweep.commandsPerSec)} | ${n(k.sweep.eventCommitMs.during.p99)} | ` +
        `${s1(Math.max(...k.gaps.map((g) => g.ms)))} | ${k.failedTransactions} | ` +
        `${n(k.sweep.eventsWritten - k.sweep.eventsSent)} | ${yes(k.stateMatchesOracle)} |`,
    ),
    '',
    'Longest commit gap of each task, in s (in brackets: when it began, relative to the kill; "open": no commit until the end of the phase):',
    '',
    `| task | ${r.kills.map((k) => `${k.role} killed`).join(' | ')} |`,
    `| ---: |${' ---: |'.repeat(r.kills.length)}`,
    ...tasks.map((t) => `| ${t} | ${r.kills.map((k) => gapOf(k, t)).join(' | ')} |`),
    `| _baseline, before the sweep (any task)_ | ${r.kills.map((k) => s1(k.baselineGapMs)).join(' | ')} |`,
  ].join('\n');
}

export function writeClusterDocs(root: string, report: ClusterReport): void {
  writePartDocs(root, 'cluster', report, clusterMarkdown(report));
}
