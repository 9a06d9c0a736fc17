import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BudgetComparison } from './budget';
import {
  durationText,
  judgeBudgetAims,
  paceSegments,
  paceSegmentsLine,
  PACE_LIMITERS,
  verdictLines,
  signalLine,
  type BudgetVerdict,
} from './latency-budget';
import { lastRunLine, n, writePartDocs, type PartRun } from './report';
import type { SweepResult } from './sweeps';

/** What docs/benchmarks/budget.json holds: one run of part 6 and where it ran. */
export interface BudgetReport extends PartRun {
  result: BudgetComparison;
  verdicts: BudgetVerdict[];
}

/** Where issue 32 states its aims. */
const AIM_KEYS = 200_000;
const AIM_RATE = 2_000;

/** Issue 32's sweep aims on this run: the default budget's relay sweep, the one with none, the chunked sweep. */
export function judgeBudgetPart(r: BudgetComparison): BudgetVerdict[] {
  const byBudget = (label: string) => r.relays.find((x) => x.relay?.budget === label);
  const defaultBudget = byBudget(r.defaultBudget);
  const off = byBudget('off');
  const offAim =
    r.keys !== AIM_KEYS || r.rate !== AIM_RATE
      ? `indicative: the aims are for ${n(AIM_KEYS)} keys at ${n(AIM_RATE)} events/s, this run ${n(r.keys)} at ${n(r.rate)}`
      : undefined;
  return judgeBudgetAims(
    {
      defaultLabel: r.defaultBudget,
      ...(defaultBudget ? { defaultBudget } : {}),
      ...(off ? { off } : {}),
      chunked: r.chunked,
    },
    offAim,
  );
}

const times = (k: number) => (k === 1 ? 'once' : `${k} times`);

function label(x: SweepResult): string {
  return x.relay ? `relay, budget ${x.relay.budget}` : 'chunked in-loop';
}

export function budgetMarkdown(report: BudgetReport): string {
  const { result: r } = report;
  const sweeps = [r.chunked, ...r.relays];
  const whole = sweeps.filter((x) => !x.truncated);
  const lines = [
    lastRunLine(report),
    '',
    `**Settings.** ${n(r.keys)} keys, ${n(r.candidates)} of them dormant-eligible; steady load ${n(r.rate)} events/s; ` +
      `chunked sweep ${n(r.chunkKeys)} keys per slice; every relay sweep uncapped (scan \`rate\` 0), paced by its ` +
      `\`latencyBudget\` alone, pausing above a command lag of ${n(r.maxLag)}; the scanner reads the processor's ` +
      `\`GET /status\` \`eventCommitLatency\` (\`PROCESSOR_URLS\`); a relay sweep still running ${r.sweepMaxSec} s after its ` +
      `scan was created is cut there (cancelled) and its duration projected at its rate so far. Load average ${report.loadAverage.start} at the start, ` +
      `${report.loadAverage.end} at the end${report.loadAverage.start > report.machine.cpus ? ' (other work was competing for the CPUs: expect noise)' : ''}.`,
    '',
    '#### Targets (issue 32)',
    '',
    ...verdictLines(report.verdicts),
    '',
    '#### Sweep duration against the budget',
    '',
    '| sweep | duration | p99 base → sweep | p99 × | longest stall, one task (all) | events/s base → sweep | commands emitted/s | paced rate mean / max | rate held by (s): ' +
      `${PACE_LIMITERS.join(' / ')} | budget p99 (baseline) | final state |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |',
    ...sweeps.map((x) => {
      const p = x.relay?.pace;
      return (
        `| ${label(x)} | ${durationText(x)} | ${n(x.baseline.p99)} → ${n(x.during.p99)} ms | ${x.p99Ratio.toFixed(2)} | ` +
        `${n(x.taskStall.ms)} (${n(x.anyStall.ms)}) ms | ${n(x.eventsPerSecBaseline)} → ${n(x.eventsPerSecDuring)} | ` +
        (p
          ? `${n(p.emittedPerSec)} | ${n(p.rate.mean)} / ${n(p.rate.max)} | ${PACE_LIMITERS.map((l) => p.secondsBy[l].toFixed(1)).join(' / ')} | ` +
            `${p.budgetP99Ms === null ? '–' : `${n(p.budgetP99Ms)} ms`} (${p.baselineP99Ms === null ? '–' : `${n(p.baselineP99Ms)} ms`}) | `
          : '| | | | ') +
        `${x.check.ok ? 'PASS' : 'FAIL'} |`
      );
    }),
    '',
    ...r.relays.map((x) => {
      const p = x.relay!.pace;
      return (
        `- relay, budget ${x.relay!.budget}: ` +
        (x.truncated
          ? `cut at its limit after walking ${n(x.truncated.walked)} of ${n(x.truncated.keys)} keys and emitting ${n(x.truncated.emitted)} commands; `
          : '') +
        `the scanner's readings of the processor during the sweep: ${signalLine(x.relay!.signal)}; ` +
        `${p.paced} of ${p.samples} polls of \`GET /scans/:id\` showed a pace; ` +
        `cut on the budget ${times(p.budgetCuts)}, on lag ${times(p.lagCuts)}; highest event p99 the pacer read ${p.maxEventP99Ms === null ? '–' : `${n(p.maxEventP99Ms)} ms`}; ` +
        `command produce → commit p50/p99 ${n(x.commandLatency.p50)}/${n(x.commandLatency.p99)} ms. ` +
        `Rate over time (s from the scan's creation): ${paceSegmentsLine(paceSegments(p.timeline)) || 'no pace seen'}.`
      );
    }),
    '',
    `Final state: ${r.sameFinalState ? 'PASS' : 'FAIL'}: every deployment ends equal to the oracle` +
      `${whole.length > 1 && new Set(whole.map((x) => x.check.digest)).size === 1 ? `, all ${whole.length} whole sweeps identical (state digest ${whole[0]!.check.digest})` : ''}` +
      `${whole.length < sweeps.length ? `; a sweep cut at its limit is checked key by key as either swept or not (${sweeps.length - whole.length} of them)` : ''}.`,
    '',
    '![Sweep duration, event p99 and longest stall against the latency budget](benchmarks/budget.svg)',
    '',
    '![The paced command rate over each relay sweep](benchmarks/budget-pace.svg)',
  ];
  return lines.join('\n');
}

/** budget.json, budget.svg, budget-pace.svg and the bench:budget block of docs/benchmarks.md. */
export function writeBudgetDocs(root: string, report: BudgetReport, charts: { budget: string; pace: string }): void {
  const dir = join(root, 'docs', 'benchmarks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'budget.svg'), charts.budget);
  writeFileSync(join(dir, 'budget-pace.svg'), charts.pace);
  writePartDocs(root, 'budget', report, budgetMarkdown(report));
}
