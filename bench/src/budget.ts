import { log } from './common';
import { budgetLabel, budgetRank, DEFAULT_BUDGET, parseBudget } from './latency-budget';
import type { Admin, Kafka } from './lib';
import type { BenchOptions } from './options';
import { prepareSweeps, runPhase, sameFinalState, type RelayPlan, type SweepResult } from './sweeps';

/** Part 6 (issue 32): the in-loop chunked sweep and one uncapped relay sweep per latency budget, same state and load. */
export interface BudgetComparison {
  keys: number;
  candidates: number;
  rate: number;
  chunkKeys: number;
  /** The scanner's MAX_COMMAND_LAG in the relay sweeps. */
  maxLag: number;
  /** A relay sweep still running this long after its scan was created is cut (SweepResult.truncated). */
  sweepMaxSec: number;
  /** The budget the scanner applies by default (judged), and the budgets in the order they ran. */
  defaultBudget: string;
  budgets: string[];
  loadTotal: number;
  chunked: SweepResult;
  /** One per budget, `relay.budget` naming it, tightest budget first (the run order is in `budgets`). */
  relays: SweepResult[];
  sameFinalState: boolean;
}

/**
 * The chunked in-loop sweep first, then the relay without a budget (the pair issue 32 compares,
 * next to each other), then the other budgets; every relay sweep uncapped (options.rate 0), so
 * only the budget (and the lag safety net) paces it. Each phase is part 2's: its own deployment
 * seeded with the same state, the same steady load, baseline, sweep, tail, oracle check.
 */
export async function measureBudgetPart(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  o: BenchOptions,
  workDir: string,
): Promise<BudgetComparison> {
  const shared = prepareSweeps(kafka, admin, brokers, o, workDir, o.budgetSweepMaxSec);
  const budgets = [...o.budgets].sort((a, b) => Number(b === 'off') - Number(a === 'off'));
  const one = { ...o, rounds: 1 };
  const phase = { ...shared, o: one };
  log(`part 6: the chunked in-loop sweep, then relay sweeps under the budgets ${budgets.join(', ')}`);
  const chunked = await runPhase('chunked', 1, phase);
  const relays: SweepResult[] = [];
  for (const label of budgets) {
    const budget = parseBudget(label);
    const plan: RelayPlan = {
      rate: 0,
      maxLag: o.budgetMaxLag,
      budget,
      budgetLabel: budgetLabel(budget),
      tag: budgetLabel(budget).replace(/\./g, '-'),
      maxSweepMs: o.budgetSweepMaxSec * 1000,
    };
    relays.push(await runPhase('relay', 1, phase, plan));
  }
  return {
    keys: o.keys,
    candidates: shared.candidates,
    rate: o.rate,
    chunkKeys: o.chunkKeys,
    maxLag: o.budgetMaxLag,
    sweepMaxSec: o.budgetSweepMaxSec,
    defaultBudget: DEFAULT_BUDGET,
    budgets,
    loadTotal: shared.loadTotal,
    chunked,
    relays: [...relays].sort((a, b) => budgetRank(a.relay!.budget) - budgetRank(b.relay!.budget)),
    sameFinalState: sameFinalState([chunked, ...relays], shared.loadTotal),
  };
}
