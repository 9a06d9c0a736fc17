import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrokerProbe } from './broker-probe';
import type { CpuUse } from './cpu';
import type { Machine, SourceState } from './machine';
import type { BenchOptions } from './options';
import { formatWithPrettier, writeDocsBlock, type LatencySummary } from './lib';
import { paceSegments, paceSegmentsLine, signalLine } from './latency-budget';
import type { Reference } from './reference';
import type { Stall, TransactionSummary } from './stats';
import { sweepLabel, type SweepComparison, type SweepResult } from './sweeps';
import type { ThroughputResult } from './throughput';

export interface Target {
  name: string;
  aim: string;
  measured: string;
  /** null: not judged on this run (why is in `note`). */
  met: boolean | null;
  note?: string;
}

export interface BenchReport {
  machine: Machine;
  options: BenchOptions;
  durationSec: number;
  broker: BrokerProbe;
  throughput: ThroughputResult;
  sweeps: SweepComparison;
  /** The run the "not slower than before" aims compare with (docs/benchmarks/reference.json). */
  reference?: Reference;
  targets: Target[];
}

/** Where issue 11 states its aims: 200,000 keys at 2,000 events/s. */
const AIM_KEYS = 200_000;
const AIM_RATE = 2_000;

/** The aims of issues 3 and 11 (issue 11's replace issue 6's), judged on this run. */
export function judgeTargets(t: ThroughputResult, s: SweepComparison, ref?: Reference): Target[] {
  const relays = s.results.filter((r) => r.mode === 'relay');
  const each = (f: (r: SweepResult) => string, rs: SweepResult[] = relays) => rs.map(f).join(' / ');
  const rounds = relays.length > 1 ? ', each round' : '';
  const relayTargets: Target[] = relays.length
    ? [
        {
          name: `relay: p99 during the sweep / its baseline p99 (issue 11)${rounds}`,
          aim: '≤ 1.3',
          measured: each((r) => r.p99Ratio.toFixed(2)),
          met: relays.every((r) => r.p99Ratio <= 1.3),
        },
        {
          name: `relay: longest single-task stall during the sweep (issue 11)${rounds}`,
          aim: '≤ 400 ms',
          measured: `${each((r) => n(r.taskStall.ms))} ms`,
          met: relays.every((r) => r.taskStall.ms <= 400),
        },
        {
          name: `relay: sweep of 200,000 keys, scan created → completed (issue 11)${rounds}`,
          aim: '≤ 6 s',
          measured: `${each((r) => (r.sweepMs / 1000).toFixed(1))} s (${n(relays[0]!.work['emitted'] ?? NaN)} commands)`,
          met: s.keys === AIM_KEYS ? relays.every((r) => r.sweepMs <= 6_000) : null,
          ...(s.keys === AIM_KEYS ? {} : { note: `the aim is for ${n(AIM_KEYS)} keys; this run swept ${n(s.keys)}` }),
        },
      ]
    : [];
  const restoreTargets: Target[] = [];
  if (ref) {
    const comparable = ref.throughputEvents === t.events && ref.eventsPerAccount === t.events / t.accounts;
    restoreTargets.push({
      name: 'restore after the throughput run, records/s, vs the reference run (issue 11)',
      aim: `≥ ${n(ref.restore.recordsPerSec)}`,
      measured: `${n(t.restore.recordsPerSec)} (${n(t.restore.records)} records)`,
      met: comparable ? t.restore.recordsPerSec >= ref.restore.recordsPerSec : null,
      ...(comparable
        ? {}
        : {
            note: `the reference restored the changelog of ${n(ref.throughputEvents)} events; this run ${n(t.events)}`,
          }),
    });
    const seeded = seededRestoreRate(s.results.map((r) => r.restore));
    const refSeeded = seededRestoreRate(ref.seededRestores);
    if (Number.isFinite(seeded) && Number.isFinite(refSeeded)) {
      restoreTargets.push({
        name: 'restore of the seeded sweep state, records/s (median over the deployments), vs the reference run (issue 11)',
        aim: `≥ ${n(refSeeded)}`,
        measured: `${n(seeded)} (${n(s.keys)} records)`,
        met: ref.keys === s.keys ? seeded >= refSeeded : null,
        ...(ref.keys === s.keys
          ? {}
          : { note: `the reference restored ${n(ref.keys)} seeded records; this run ${n(s.keys)}` }),
      });
    }
  }
  return [
    {
      name: 'events/s with exactly-once (issue 3)',
      aim: '≥ 20,000',
      measured: n(t.eos.eventsPerSec),
      met: t.eos.eventsPerSec >= 20_000,
    },
    {
      name: 'restore, records/s (issue 3)',
      aim: '≥ 100,000',
      measured: n(t.restore.recordsPerSec),
      met: t.restore.recordsPerSec >= 100_000,
    },
    {
      name: 'backlog: exactly-once / raw kafkajs ceiling of the same run (issue 11)',
      aim: '≥ 0.9',
      measured: t.ratio.toFixed(2),
      met: t.ratio >= 0.9,
    },
    ...restoreTargets,
    {
      name: `baseline p99 before the sweep (issue 11), each deployment`,
      aim: '≤ 250 ms',
      measured: `${each((r) => n(r.baseline.p99), s.results)} ms`,
      met: s.results.every((r) => r.baseline.p99 <= 250),
    },
    ...relayTargets,
    {
      name: 'every sweep reaches the same, correct final state',
      aim: 'oracle',
      measured: s.sameFinalState ? 'PASS' : 'FAIL',
      met: s.sameFinalState,
    },
  ];
}

/** Median records/s over restores (NaN when there is none). */
function seededRestoreRate(restores: Array<{ records: number; ms: number }>): number {
  const rates = restores
    .filter((r) => r.records > 0 && r.ms > 0)
    .map((r) => (r.records * 1000) / r.ms)
    .sort((a, b) => a - b);
  return rates.length === 0 ? NaN : rates[Math.floor((rates.length - 1) / 2)]!;
}

/** The results as markdown: printed as the run's table and put into docs/benchmarks.md. */
export function resultsMarkdown(r: BenchReport): string {
  const { machine: m, options: o, throughput: t, sweeps: s, broker: b, reference: ref } = r;
  const lines: string[] = [];
  const push = (...l: string[]) => lines.push(...l);
  const offAim = s.keys !== AIM_KEYS || s.rate !== AIM_RATE;
  push(
    `_Last run: ${m.date.slice(0, 16).replace('T', ' ')} UTC, \`pnpm bench${o.label === 'default' ? '' : o.label === 'custom' ? ' (custom flags)' : ` --${o.label}`}\`, ${(r.durationSec / 60).toFixed(1)} min._`,
    '',
    `**Machine.** ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB RAM, Linux ${m.kernel}, Node ${m.node}, kafkajs ${m.kafkajs}; ` +
      `one broker \`${m.kafkaImage}\` in ${m.containerRuntime}, on the same machine as every client. ` +
      `Load average when the run started: ${m.loadAverageAtStart} (${m.loadAverageAtStart > m.cpus ? 'other work was competing for the CPUs: expect noise' : 'quiet'}).`,
    '',
    `**Settings.** ${o.partitions} partitions. Throughput input: ${n(t.events)} events (${n(t.accounts)} accounts × ${o.eventsPerAccount}). ` +
      `Sweeps: ${n(s.keys)} keys, ${n(s.candidates)} of them dormant-eligible; steady load ${n(s.rate)} events/s; ${o.baselineSec} s baseline; ` +
      `chunked sweep ${n(s.chunkKeys)} keys per slice; relay at most ${n(s.relayRate)} commands/s, pausing above a command lag of ${n(o.relayMaxLag)}, ` +
      `paced under that cap by the latency budget ${s.relayBudget} (the scanner reads the processor's \`GET /status\` event commit p99).` +
      whatIf(o),
    '',
    '### Targets',
    '',
    ...targetsTable(r.targets),
    '',
    ...(offAim
      ? [
          `Issue 11 states its aims for ${n(AIM_KEYS)} keys at ${n(AIM_RATE)} events/s; this run used ${n(s.keys)} keys at ${n(s.rate)} events/s, so its verdicts are indicative only.`,
          '',
        ]
      : []),
    ...(ref
      ? [
          `Reference for "not slower than before": the \`pnpm bench${ref.label === 'default' ? '' : ` --${ref.label}`}\` run of ${ref.date.slice(0, 16).replace('T', ' ')} UTC, ` +
            `before the processor core was rewritten for issue 11 (its own output, kept as \`${ref.path}\`): ` +
            `${n(ref.restore.records)} records restored at ${n(ref.restore.recordsPerSec)} records/s after the throughput run.`,
          '',
        ]
      : [
          'No reference run (docs/benchmarks/reference.json) was found: restore is not compared with an earlier core.',
          '',
        ]),
    '### Throughput (pre-produced input, at full speed) and restore',
    '',
    '| pipeline | events/s | raw: batch, exactly-once: transaction p50 / p99 / max (ms) | events per transaction | CPU cores: pipeline, broker (machine busy) | peak RSS |',
    '| --- | ---: | --- | ---: | --- | ---: |',
    `| raw kafkajs consume → produce (no state, no transactions) | ${n(t.raw.eventsPerSec)} | ${lat(t.raw.batchMs)} | | ${cores(t.raw.cpu)} | ${mb(t.raw.peakRssBytes)} |`,
    `| processor, exactly-once | ${n(t.eos.eventsPerSec)} | ${lat(t.eos.commitMs)} | ${n(t.eos.recordsPerTransaction)} | ${cores(t.eos.cpu)} | ${mb(t.eos.peakRssBytes)} (heap ${mb(t.eos.memory.heapUsed)}) |`,
    `| ratio | **${t.ratio.toFixed(2)}** | | | | |`,
    '',
    `State after the throughput run equals the oracle: ${t.eos.stateMatchesOracle ? 'PASS' : 'FAIL'}` +
      `${warningsLine(t.eos.warnings)}. ${n(t.eos.transactions)} transactions (${t.eos.transactionsPerTaskSec.toFixed(1)} per task per second); ` +
      `kafkajs-level ${lat(t.eos.transactionMs.total)} ms (p50 / p99 / max; ` +
      `p50 of sendBatch ${n(t.eos.transactionMs.send.p50)}, sendOffsets ${n(t.eos.transactionMs.offsets.p50)}, commit ${n(t.eos.transactionMs.commit.p50)} ms); ` +
      `SQLite flush after each commit ${lat(t.eos.flushMs)} ms; requests per transaction ${requestsLine(t.eos.transactionSummary)}; ` +
      `processor event-loop delay at most ${n(t.eos.transactionSummary.loopDelay.max)} ms. ` +
      `Wall time from process start to every offset committed: ${(t.eos.wallMs / 1000).toFixed(1)} s.`,
    '',
    `Restore into an empty state directory: ${n(t.restore.records)} changelog records in ${(t.restore.ms / 1000).toFixed(2)} s = ` +
      `**${n(t.restore.recordsPerSec)} records/s** (ready ${(t.restore.readyMs / 1000).toFixed(1)} s after the process started; peak RSS ${mb(t.restore.peakRssBytes)}, JS heap at most ${mb(t.restore.memory.heapUsed)}).`,
    '',
    '### Broker round trips (outside the processor)',
    '',
    '| request | p50 | p99 | max |',
    '| --- | ---: | ---: | ---: |',
    `| produce, acks=all | ${ms(b.produceMs.p50)} | ${ms(b.produceMs.p99)} | ${ms(b.produceMs.max)} |`,
    `| back-to-back transaction, the processor's task producer (retry from 20 ms) | ${ms(b.transactionMs.p50)} | ${ms(b.transactionMs.p99)} | ${ms(b.transactionMs.max)} |`,
    `| the same, retry from 100 ms (kafkajs's default, the task producer's before issue 11) | ${ms(b.transactionSlowRetryMs.p50)} | ${ms(b.transactionSlowRetryMs.p99)} | ${ms(b.transactionSlowRetryMs.max)} |`,
    `| fence: \`initTaskProducer\` (connect, InitProducerId, empty begin + abort) while the previous producer of the id is connected | ${ms(b.fenceMs.p50)} | ${ms(b.fenceMs.p99)} | ${ms(b.fenceMs.max)} |`,
    '',
    `### Sweep interference (${n(s.keys)} keys, steady load ${n(s.rate)} events/s${s.rounds > 1 ? `, ${s.rounds} rounds in alternating order` : ''})`,
    '',
    `Latency: produce → commit of the events committed in the ${o.baselineSec} s before the sweep started (base), and of every event in flight at some point of the sweep. ` +
      'Stall: the longest time an event of one task waited while that task committed no event (in brackets: no event committed by any task). ' +
      'Transactions per task: committed transactions of each task per second, the mean over the tasks (the commit interval allows at most 10).',
    '',
    '| sweep | duration | p99 base → sweep | p99 × | p50 base → sweep | max during | longest stall, one task (all) base → sweep | transactions/s per task base → sweep | events/s base → sweep | final state |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...s.results.map(
      (x) =>
        `| ${sweepLabel(x, s.rounds)} | ${(x.sweepMs / 1000).toFixed(1)} s | ${n(x.baseline.p99)} → ${n(x.during.p99)} ms | ${x.p99Ratio.toFixed(2)} | ` +
        `${n(x.baseline.p50)} → ${n(x.during.p50)} ms | ${n(x.during.max)} ms | ` +
        `${n(x.baselineTaskStall.ms)} (${n(x.baselineAnyStall.ms)}) → ${n(x.taskStall.ms)} (${n(x.anyStall.ms)}) ms | ` +
        `${x.txBaseline.perTask.mean.toFixed(1)} → ${x.txDuring.perTask.mean.toFixed(1)} | ` +
        `${n(x.eventsPerSecBaseline)} → ${n(x.eventsPerSecDuring)} | ${x.check.ok ? 'PASS' : 'FAIL'} |`,
    ),
    '',
    ...s.results.map(
      (x) =>
        `- ${sweepLabel(x, s.rounds)}: ${workLine(x.work)}${x.mode === 'relay' ? `; command produce → commit p50/p99 ${n(x.commandLatency.p50)}/${n(x.commandLatency.p99)} ms` : ''}` +
        `${x.relay ? `; budget ${x.relay.budget}, the scanner's readings of the processor ${signalLine(x.relay.signal)}; paced rate over time (s from the scan's creation): ${paceSegmentsLine(paceSegments(x.relay.pace.timeline)) || 'no pace seen'}` : ''}; ` +
        `longest task stall ${stallLine(x.taskStall, x.startedAt)}; ${txLine(x.txBaseline, x.txDuring)}; ` +
        `CPU cores baseline → sweep: ${cpuLine(x.cpuBaseline, x.cpuDuring)}; processor peak RSS ${mb(x.peakRssBytes.processor)} (heap ${mb(x.processorMemory.heapUsed)})` +
        `${x.peakRssBytes.scanner ? `, scanner ${mb(x.peakRssBytes.scanner)}` : ''}; restored ${n(x.restore.records)} records in ${(x.restore.ms / 1000).toFixed(1)} s` +
        `${x.loadBehindMs > 50 ? `; the load generator fell ${n(x.loadBehindMs)} ms behind its schedule at worst` : ''}` +
        `${warningsLine(x.processorWarnings)}.`,
    ),
    '',
    `Final state: ${s.sameFinalState ? 'PASS' : 'FAIL'}: every deployment ends equal to the oracle ` +
      `(${n(s.results[0]!.check.expectedKeys)} keys, ${n(s.results[0]!.check.expectedDormant)} dormant after the sweep and ${n(s.loadTotal)} load events)` +
      `${s.results.length > 1 && new Set(s.results.map((x) => x.check.digest)).size === 1 ? `, and all ${s.results.length} final states are identical (state digest ${s.results[0]!.check.digest})` : ''}.` +
      s.results
        .filter((x) => !x.check.ok)
        .map(
          (x) => ` ${sweepLabel(x, s.rounds)}: ${x.check.mismatched} keys differ, e.g. ${x.check.examples.join('; ')}`,
        )
        .join(''),
    '',
    '![Event latency around each sweep](benchmarks/latency.svg)',
  );
  return lines.join('\n');
}

/** latest.json, latency.svg and the bench:results block of docs/benchmarks.md (the prose around it is kept). */
export function writeDocs(root: string, report: BenchReport, svg: string): void {
  const dir = join(root, 'docs', 'benchmarks');
  mkdirSync(dir, { recursive: true });
  const jsonPath = join(dir, 'latest.json');
  writeFileSync(jsonPath, `${JSON.stringify(report)}\n`);
  formatWithPrettier([jsonPath]);
  writeFileSync(join(dir, 'latency.svg'), svg);
  writeDocsBlock(join(root, 'docs', 'benchmarks.md'), 'bench:results', resultsMarkdown(report));
}

/** A part's docs: every figure in docs/benchmarks/<name>.json, and `markdown` between the bench:<name> markers of docs/benchmarks.md. */
export function writePartDocs(root: string, name: string, report: object, markdown: string): void {
  const dir = join(root, 'docs', 'benchmarks');
  mkdirSync(dir, { recursive: true });
  const jsonPath = join(dir, `${name}.json`);
  writeFileSync(jsonPath, `${JSON.stringify(report)}\n`);
  formatWithPrettier([jsonPath]);
  writeDocsBlock(join(root, 'docs', 'benchmarks.md'), `bench:${name}`, markdown);
}

/** Where and when a part ran, what it is reported with. */
export interface PartRun {
  machine: Machine;
  source: SourceState;
  command: string;
  startedAt: string;
  durationSec: number;
  /** The 1-minute load average when the part started and when it ended. */
  loadAverage: { start: number; end: number };
}

/** A part's first line: when and how it ran, how long it took, and on which code. */
export function lastRunLine(run: {
  startedAt: string;
  command: string;
  durationSec: number;
  source: SourceState;
}): string {
  const { source } = run;
  const files = source.uncommitted;
  return (
    `_Last run: ${run.startedAt.slice(0, 16).replace('T', ' ')} UTC, \`${run.command}\`, this part ${(run.durationSec / 60).toFixed(1)} min, ` +
    `on commit \`${source.commit}\` (${source.subject})` +
    (files.length
      ? ` **plus uncommitted changes** to ${files.length} files (${files.slice(0, 6).join(', ')}${files.length > 6 ? ', …' : ''})`
      : ', working tree clean') +
    '._'
  );
}

/** The targets as a markdown table: each one met, missed or not judged (and why). */
export function targetsTable(targets: Target[]): string[] {
  const verdict = (x: Target) => (x.met === null ? `not judged: ${x.note ?? ''}` : x.met ? 'met' : '**missed**');
  return [
    '| target | aim | measured | |',
    '| --- | --- | --- | --- |',
    ...targets.map((x) => `| ${x.name} | ${x.aim} | ${x.measured} | ${verdict(x)} |`),
  ];
}

function whatIf(o: BenchOptions): string {
  const changes = Object.entries(o.processorEnv).map(([k, v]) => `${k}=${v}`);
  if (o.txRetryMs !== undefined) changes.push(`transactional producer retry from ${o.txRetryMs} ms (what-if)`);
  if (o.scannerNice > 0) changes.push(`scanner at nice ${o.scannerNice} (what-if)`);
  return changes.length
    ? ` **Processor settings changed for this run:** ${changes.join(', ')}.`
    : ' Processor at its default settings.';
}

function cores(c: CpuUse): string {
  return `${Object.values(c.cores)
    .map((v) => v.toFixed(2))
    .join(', ')} (${Math.round(c.machineBusy * 100)} %${pressure(c)})`;
}

function pressure(c: CpuUse): string {
  return c.pressure === undefined ? '' : `, CPU pressure ${Math.round(c.pressure * 100)} %`;
}

function cpuLine(a: CpuUse, b: CpuUse): string {
  const names = Object.keys(b.cores);
  const parts = names.map(
    (name) => `${name} ${(a.cores[name] ?? NaN).toFixed(2)} → ${(b.cores[name] ?? NaN).toFixed(2)}`,
  );
  const psi =
    a.pressure !== undefined && b.pressure !== undefined
      ? `; CPU pressure ${Math.round(a.pressure * 100)} % → ${Math.round(b.pressure * 100)} %`
      : '';
  return `${parts.join(', ')} (machine ${Math.round(a.machineBusy * 100)} % → ${Math.round(b.machineBusy * 100)} % busy${psi})`;
}

function txLine(a: TransactionSummary, b: TransactionSummary): string {
  const t = (x: TransactionSummary) => `${n(x.total.p50)}/${n(x.total.p99)}`;
  const step = (x: TransactionSummary) =>
    `send ${n(x.send.p50)}, offsets ${n(x.offsets.p50)}, commit ${n(x.commit.p50)}`;
  const perTask = (x: TransactionSummary) => `${x.perTask.min.toFixed(1)}–${x.perTask.max.toFixed(1)}`;
  const failed = a.failed + b.failed;
  const fences = a.fences + b.fences;
  return (
    `transactions/s (all tasks) base → sweep ${a.perSec.toFixed(1)} → ${b.perSec.toFixed(1)}, per task (slowest–fastest) ${perTask(a)} → ${perTask(b)}, ` +
    `transaction p50/p99 ${t(a)} → ${t(b)} ms (p50 of ${step(a)} → ${step(b)} ms), ` +
    `SQLite flush p50/p99 ${n(a.flushMs.p50)}/${n(a.flushMs.p99)} → ${n(b.flushMs.p50)}/${n(b.flushMs.p99)} ms` +
    `${failed > 0 ? `, ${failed} failed transactions` : ''}${fences > 0 ? `, ${fences} fences` : ''}; ` +
    `requests per transaction during the sweep: ${requestsLine(b)}; ` +
    `fetch loop base → sweep ${a.fetch.perSec.toFixed(1)} → ${b.fetch.perSec.toFixed(1)} fetches/s, longest time between two fetches ${n(a.fetch.longestGapMs)} → ${n(b.fetch.longestGapMs)} ms; ` +
    `processor event-loop delay, max ${n(a.loopDelay.max)} → ${n(b.loopDelay.max)} ms`
  );
}

/** "FindCoordinator 4.1 (2 ms), Produce 1.0 (30 ms), …": requests per committed transaction (mean round trip). */
function requestsLine(x: TransactionSummary): string {
  if (x.requests.length === 0) return '–';
  const total = x.requests.reduce((a, r) => a + r.perTransaction, 0);
  return (
    `${total.toFixed(1)} (` +
    x.requests.map((r) => `${r.api} ${r.perTransaction.toFixed(1)} at ${ms(r.meanMs)}`).join(', ') +
    ')'
  );
}

/** "812 ms (task 3, from 1.2 s into the sweep)". */
function stallLine(x: Stall, sweepStart: number): string {
  if (!Number.isFinite(x.from)) return `${n(x.ms)} ms`;
  const at = (x.from - sweepStart) / 1000;
  return `${n(x.ms)} ms (task ${x.task}, from ${at <= -0.05 ? `${(-at).toFixed(1)} s before` : `${Math.max(0, at).toFixed(1)} s into`} the sweep)`;
}

function warningsLine(warnings: Record<string, number>): string {
  const entries = Object.entries(warnings);
  if (entries.length === 0) return '; the processor logged no warning';
  return `; processor warnings: ${entries.map(([msg, count]) => `${count}× "${msg}"`).join(', ')}`;
}

function workLine(work: Record<string, number>): string {
  return Object.entries(work)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k.replace(/_/g, ' ')} ${n(v)}`)
    .join(', ');
}

export function n(v: number): string {
  return Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '–';
}

export function ms(v: number): string {
  return Number.isFinite(v) ? `${v < 10 ? v.toFixed(1) : Math.round(v)} ms` : '–';
}

function lat(s: LatencySummary): string {
  return `${n(s.p50)} / ${n(s.p99)} / ${n(s.max)}`;
}

export function mb(bytes: number | undefined): string {
  return bytes === undefined ? '–' : `${Math.round(bytes / 2 ** 20)} MB`;
}
