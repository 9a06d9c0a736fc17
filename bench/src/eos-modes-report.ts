import { loadavg } from 'node:os';
import type { ModesComparison, SteadyModeResult } from './eos-modes';
import { lastRunLine, n, targetsTable, writePartDocs, type PartRun, type Target } from './report';

/** What docs/benchmarks/modes.json holds: one run of part 4 and where it ran. */
export interface ModesReport extends PartRun {
  result: ModesComparison;
  targets: Target[];
}

const one = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '–');

/** Issue 22's aims, judged on this run's figures. */
export function judgeModesTargets(r: ModesComparison): Target[] {
  const v2 = r.steady.filter((s) => s.mode === 'v2');
  const perInterval = 1000 / r.commitIntervalMs;
  const maxV2 = Math.max(...v2.map((s) => s.transactionsPerSec));
  const v2Backlog = r.backlog.find((b) => b.mode === 'v2');
  const targets: Target[] = [
    {
      name: 'v2 transactions/s independent of the tasks',
      aim: `≤ 1 per commit interval per instance (${one(perInterval)}/s) at every partition count`,
      measured: v2.map((s) => `${one(s.transactionsPerSec)}/s at ${s.partitions} partitions`).join(', '),
      met: v2.length > 0 && maxV2 <= perInterval * 1.05,
    },
    {
      name: 'v2 baseline event commit p99',
      aim: `at most the transaction p99 plus one interval (${r.commitIntervalMs} ms), same run`,
      measured: v2
        .map(
          (s) =>
            `${n(s.eventCommitMs.p99)} ms vs ${n(s.transactionMs.p99)} + ${r.commitIntervalMs} ms at ${s.partitions} partitions`,
        )
        .join('; '),
      met: v2.length > 0 && v2.every((s) => s.eventCommitMs.p99 <= s.transactionMs.p99 + r.commitIntervalMs),
    },
  ];
  if (v2Backlog)
    targets.push({
      name: 'v2 backlog throughput',
      aim: '≥ 0.8 of the raw pipeline',
      measured: `${n(v2Backlog.eventsPerSec)} of ${n(v2Backlog.rawEventsPerSec)} events/s = ${v2Backlog.ratio.toFixed(2)}`,
      met: v2Backlog.ratio >= 0.8,
    });
  targets.push({
    name: 'final state',
    aim: 'every run equals the oracle',
    measured: r.ok ? 'all equal' : 'a run differs',
    met: r.ok,
  });
  return targets;
}

export function modesMarkdown(report: ModesReport): string {
  const { result: r, machine: m } = report;
  const steadyRow = (s: SteadyModeResult) =>
    `| ${s.mode} | ${s.partitions} | ${one(s.eventsPerSec)} | ${one(s.transactionsPerSec)} | ${one(s.unitsPerSec)} | ` +
    `${n(s.producerRequestsPerSec)} | ${one(s.fetchesPerSec)} | ${n(s.eventCommitMs.p50)} / ${n(s.eventCommitMs.p99)} | ` +
    `${n(s.transactionMs.p50)} / ${n(s.transactionMs.p99)} | ${s.cpu.cores.processor ?? '–'} / ${s.cpu.cores.broker ?? '–'} | ` +
    `${s.stateMatchesOracle ? 'yes' : '**no**'} |`;
  const apis = [...new Set(r.steady.flatMap((s) => Object.keys(s.requestsByApi)))].sort();
  return [
    lastRunLine(report),
    '',
    `**Machine.** ${m.cpus} CPUs, Node ${m.node}, kafkajs ${m.kafkajs}, one broker \`${m.kafkaImage}\` on the same machine; ` +
      `1-minute load average ${report.loadAverage.start} at the start of this part, ${report.loadAverage.end} at its end` +
      `${Math.max(report.loadAverage.start, report.loadAverage.end) > m.cpus ? ' (above the CPU count: other work competed)' : ''}.`,
    '',
    '#### Targets (issue 22)',
    '',
    ...targetsTable(report.targets),
    '',
    `#### Steady load: ${n(r.rate)} events/s over ${n(r.keys)} accounts, ${r.windowSec} s measured after the warm-up`,
    '',
    '| mode | partitions | events/s committed | Kafka transactions/s | task units/s | producer requests/s | fetches/s | event commit p50 / p99 (ms) | transaction p50 / p99 (ms) | CPU cores processor / broker | state = oracle |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- |',
    ...r.steady.map(steadyRow),
    '',
    'Producer requests per second by API (the transactional producers, kafkajs `REQUEST` events):',
    '',
    `| mode | partitions | ${apis.join(' | ')} |`,
    `| --- | ---: |${' ---: |'.repeat(apis.length)}`,
    ...r.steady.map(
      (s) => `| ${s.mode} | ${s.partitions} | ${apis.map((a) => one(s.requestsByApi[a] ?? 0)).join(' | ')} |`,
    ),
    '',
    '#### Backlog: part 1 once per mode (each after its own raw pipeline run)',
    '',
    '| mode | exactly-once events/s | raw events/s | ratio | transactions | events per transaction | transaction p50 / p99 (ms) | sendBatch p50 (ms) | state = oracle |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |',
    ...r.backlog.map(
      (b) =>
        `| ${b.mode} | ${n(b.eventsPerSec)} | ${n(b.rawEventsPerSec)} | ${b.ratio.toFixed(2)} | ${n(b.transactions)} | ${n(b.eventsPerTransaction)} | ` +
        `${n(b.transactionMs.p50)} / ${n(b.transactionMs.p99)} | ${n(b.sendMs.p50)} | ${b.stateMatchesOracle ? 'yes' : '**no**'} |`,
    ),
  ].join('\n');
}

export function currentLoad(): number {
  return Math.round(loadavg()[0]! * 100) / 100;
}

export function writeModesDocs(root: string, report: ModesReport): void {
  writePartDocs(root, 'modes', report, modesMarkdown(report));
}
