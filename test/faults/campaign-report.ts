import { percentileOf } from '@state-relay/testkit';
import type { CampaignOptions, RunRecord } from './campaign';
import type { FaultName } from './faults';
import { int, provenance, seconds, type RunMeta } from './report';

// The campaign's words and tables: one line per run, a summary, the docs block.

const figure = (n: number | undefined) => (n === undefined ? '?' : int(n));

function longest(r: RunRecord): { fault: FaultName; recoveryMs: number } | undefined {
  return [...r.faults].sort((a, b) => b.recoveryMs - a.recoveryMs)[0];
}

/** Where a campaign on `brokers` brokers writes: its JSON (from the repo root) and its block of docs/faults.md. */
export function campaignOutput(brokers: 1 | 3): { file: string; block: string } {
  return brokers === 3
    ? { file: 'docs/faults/campaign-brokers3.json', block: 'campaign-brokers3' }
    : { file: 'docs/faults/campaign.json', block: 'campaign' };
}

export function runLine(r: RunRecord, total: number): string {
  const l = longest(r);
  const faults = r.schedule
    .map((f, i) => (r.faults[i] ? `${f} ${seconds(r.faults[i]!.recoveryMs)}` : `${f} (did not recover)`))
    .join(', ');
  return (
    `[campaign] run ${r.run + 1}/${total} seed ${r.seed} ${r.passed ? 'PASS' : 'FAIL'}: ${faults}; ` +
    `events ${figure(r.events)}, commands ${figure(r.commands)}, lost ${figure(r.lost)}, doubled ${figure(r.doubled)}, ` +
    `stuck ${figure(r.stuck)}; longest recovery ${l ? `${seconds(l.recoveryMs)} (${l.fault})` : '-'}; ${seconds(r.ms)}` +
    (r.tallyError ? `\n[campaign]   not counted: ${firstLine(r.tallyError)}` : '') +
    (r.passed ? '' : `\n[campaign]   ${firstLine(r.error)}\n[campaign]   replay: ${r.replay}`)
  );
}

function firstLine(error: string | undefined): string {
  return (error ?? '').split('\n')[0]!.slice(0, 400);
}

const sum = (records: RunRecord[], f: (r: RunRecord) => number | undefined) =>
  records.reduce((n, r) => n + (f(r) ?? 0), 0);

interface FaultFigures {
  fault: FaultName;
  drawn: number;
  recovered: number;
  duringWalk: number;
  median: number;
  p90: number;
  max: number;
}

export function byFault(records: RunRecord[]): FaultFigures[] {
  const names = [...new Set(records.flatMap((r) => r.schedule))].sort();
  return names.map((fault) => {
    const done = records.flatMap((r) => r.faults).filter((f) => f.fault === fault);
    const ms = done.map((f) => f.recoveryMs);
    return {
      fault,
      drawn: records.flatMap((r) => r.schedule).filter((f) => f === fault).length,
      recovered: done.length,
      duringWalk: done.filter((f) => f.scanStatus === 'running').length,
      median: percentileOf(ms, 50),
      p90: percentileOf(ms, 90),
      max: Math.max(...ms),
    };
  });
}

export function summaryLines(records: RunRecord[]): string[] {
  const failed = records.filter((r) => !r.passed);
  const lines = [
    `[campaign] ${records.length} runs: ${records.length - failed.length} passed, ${failed.length} failed; ` +
      `${sum(records, (r) => r.schedule.length)} faults drawn, ${sum(records, (r) => r.faults.length)} recovered; ` +
      `events ${int(sum(records, (r) => r.events))}, commands ${int(sum(records, (r) => r.commands))}; ` +
      `lost ${int(sum(records, (r) => r.lost))}, doubled ${int(sum(records, (r) => r.doubled))}, stuck ${int(sum(records, (r) => r.stuck))}`,
    `[campaign] recovery per fault (recovered/drawn, median, p90, max):`,
    ...byFault(records).map(
      (f) =>
        `[campaign]   ${f.fault.padEnd(28)} ${f.recovered}/${f.drawn}  ` +
        (f.recovered ? `${seconds(f.median)}  ${seconds(f.p90)}  ${seconds(f.max)}` : '-'),
    ),
  ];
  for (const r of failed)
    lines.push(`[campaign] FAILED seed ${r.seed}: ${firstLine(r.error)}`, `  replay: ${r.replay}`);
  return lines;
}

/** One invocation of a campaign run in chunks (`pnpm faults --resume`): what it ran, where, when. */
export interface CampaignChunk extends RunMeta {
  /** The run numbers it ended (each run's seed is the campaign's seed + its number). */
  runs: number[];
}

/** What `pnpm faults` writes to docs/faults/campaign*.json (chunks: since --resume). */
export interface CampaignFile {
  meta: RunMeta;
  options: CampaignOptions;
  parallel?: number;
  complete?: boolean;
  chunks?: CampaignChunk[];
  runs: RunRecord[];
}

/** The options a resumed campaign must share with the file it adds to; each difference, named. */
export function resumeMismatches(file: CampaignOptions, now: CampaignOptions): string[] {
  const keys = ['runs', 'seed', 'keys', 'rate', 'loadPerSecond', 'faultsPerRun', 'exactlyOnce', 'brokers'] as const;
  const flag: Record<(typeof keys)[number], string> = {
    runs: '--runs',
    seed: '--seed',
    keys: '--keys',
    rate: '--rate',
    loadPerSecond: '--load',
    faultsPerRun: '--faults',
    exactlyOnce: '--exactly-once',
    brokers: '--brokers',
  };
  return keys
    .filter((k) => JSON.stringify(file[k] ?? null) !== JSON.stringify(now[k] ?? null))
    .map(
      (k) =>
        `${flag[k]}: the file has ${JSON.stringify(file[k] ?? null)}, this command ${JSON.stringify(now[k] ?? null)}`,
    );
}

/** The run numbers still to do, in order, at most `chunk` of them. */
export function runsToDo(total: number, done: readonly RunRecord[], chunk = Infinity): number[] {
  const ended = new Set(done.map((r) => r.run));
  return Array.from({ length: total }, (_, i) => i)
    .filter((i) => !ended.has(i))
    .slice(0, chunk);
}

function madeBy(meta: RunMeta, chunks: readonly CampaignChunk[]): string {
  if (chunks.length <= 1) return `Made by \`${meta.command}\` on ${provenance(meta)}.`;
  return (
    `Made in ${chunks.length} chunks (\`--resume\`), each its own command and commit: ` +
    chunks.map((c) => `runs ${runList(c.runs)} by \`${c.command}\` on ${provenance(c)}`).join('; ') +
    '.'
  );
}

/** 0-based run numbers as 1-based ranges: [0,1,2,5] -> "1–3, 6". */
export function runList(runs: readonly number[]): string {
  const sorted = [...runs].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]! + 1}` : `${sorted[i]! + 1}–${sorted[j]! + 1}`);
    i = j + 1;
  }
  return parts.join(', ');
}

export function campaignMarkdown(
  records: RunRecord[],
  o: CampaignOptions,
  meta: RunMeta,
  parallel = 1,
  complete = true,
  chunks: readonly CampaignChunk[] = [],
): string {
  const failed = records.filter((r) => !r.passed);
  const out = [
    madeBy(meta, chunks) +
      (complete
        ? ''
        : chunks.length > 1 || (chunks.length === 1 && chunks[0]!.finishedAt !== undefined)
          ? ` **${records.length} of ${o.runs} runs so far**: a campaign in chunks, whose next chunk is the same ` +
            'command with `--resume` (the figures are those runs).'
          : ` **Cut short after ${records.length} of ${o.runs} runs** (stopped before its end; the figures are those ` +
            'runs, written by `pnpm faults:report`).') +
      (o.brokers === 3
        ? ' Each deployment on **three brokers**: a KRaft cluster of three combined nodes, topics at RF 3 and ' +
          '`min.insync.replicas` 2, the cluster faults in the pool.'
        : ' Each deployment on one broker.') +
      (parallel > 1
        ? ` ${parallel} deployments side by side (each its own ${o.brokers === 3 ? 'cluster' : 'broker'}, network and services, on the same two ` +
          'cores), each taking the next run when its last one ended: recovery times include that contention.'
        : ''),
    `Each run: processors on \`EXACTLY_ONCE=${o.exactlyOnce ?? 'v1'}\`, ${int(o.keys)} accounts, load ${o.loadPerSecond} events/s, the sweep at ` +
      (o.rate === 'auto' ? 'about 30 s of walk per fault (`--rate auto`), ' : `${o.rate} commands/s, `) +
      `${o.faultsPerRun[0]}–${o.faultsPerRun[1]} faults; seeds ${seedRange(records, o, complete)}. Raw figures: ` +
      `[\`${campaignOutput(o.brokers ?? 1).file}\`](${campaignOutput(o.brokers ?? 1).file.replace('docs/', '')}).`,
    '',
    '| runs | passed | failed | faults drawn | recovered | events | commands | lost | doubled | stuck |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| ${records.length} | ${records.length - failed.length} | ${failed.length} | ${sum(records, (r) => r.schedule.length)} | ` +
      `${sum(records, (r) => r.faults.length)} | ${int(sum(records, (r) => r.events))} | ${int(sum(records, (r) => r.commands))} | ` +
      `${int(sum(records, (r) => r.lost))} | ${int(sum(records, (r) => r.doubled))} | ${int(sum(records, (r) => r.stuck))} |`,
    '',
    '| fault | drawn | recovered | during the walk | recovery median | p90 | max |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...byFault(records).map(
      (f) =>
        `| \`${f.fault}\` | ${f.drawn} | ${f.recovered} | ${f.duringWalk} | ` +
        (f.recovered ? `${seconds(f.median)} | ${seconds(f.p90)} | ${seconds(f.max)} |` : '- | - | - |'),
    ),
  ];
  if (failed.length > 0) {
    out.push('', '| failed run (seed) | schedule | first error | replay |', '| --- | --- | --- | --- |');
    for (const r of failed)
      out.push(
        `| ${r.seed} | ${r.schedule.join(', ')} | ${firstLine(r.error).replace(/\|/g, '\\|').slice(0, 200)} | \`${r.replay}\` |`,
      );
  }
  return out.join('\n');
}

function seedRange(records: RunRecord[], o: CampaignOptions, complete: boolean): string {
  if (complete) return `${o.seed}–${o.seed + o.runs - 1}`;
  const seeds = records.map((r) => r.seed).sort((a, b) => a - b);
  const contiguous = seeds.every((s, i) => s === seeds[0]! + i);
  return contiguous ? `${seeds[0]}–${seeds[seeds.length - 1]}` : seeds.join(', ');
}
