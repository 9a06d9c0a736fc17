import type { TopicReplication } from './deployment';
import { budgetLabel, parseBudget } from './latency-budget';

/** What one `pnpm bench` run does; every size can be set from the command line. */
export interface BenchOptions {
  /** Keys loaded for the sweep comparison. */
  keys: number;
  /** Steady event load during the sweeps, events/s. */
  rate: number;
  /** Events pre-produced for the throughput run. */
  throughputEvents: number;
  /** Events per account in the throughput input (accounts = events / this). */
  eventsPerAccount: number;
  partitions: number;
  /** Keys per slice of the chunked in-loop sweep. */
  chunkKeys: number;
  /** Commands/s the relay emits at most, and the command lag at which it pauses. */
  relayRate: number;
  relayMaxLag: number;
  /**
   * The relay's latency budget in part 2 (`1.2x`, `300ms`, `off`); unset: its scan sets none, so the
   * scanner's default SCAN_LATENCY_BUDGET (1.2x) paces it under the --relay-rate cap.
   */
  relayBudget?: string;
  /** Part 6 (issue 32): the budgets of its relay sweeps, uncapped, in this order; `1.2x` (the default) and `off` are judged. */
  budgets: string[];
  /** Part 6: the scanner's MAX_COMMAND_LAG in its sweeps (the service default, a safety net under the budget). */
  budgetMaxLag: number;
  /**
   * Part 6: a relay sweep still running this many seconds after its scan was created is cut there
   * (cancelled; reported with its projected duration), which bounds the part's time; also the sweep
   * time budgeted in its fixed steady-load total.
   */
  budgetSweepMaxSec: number;
  warmupSec: number;
  baselineSec: number;
  tailSec: number;
  /** Sweep time budgeted in the fixed steady-load total (see sweeps.ts). */
  sweepAllowanceSec: number;
  /** Profile the processor during the throughput run (--cpu-prof) and print the top functions. */
  profile: boolean;
  /**
   * What-if (never in the default run): the processor's transactional producers retry from
   * this many ms instead of the 20 ms kafka-runtime sets. See docs/benchmarks.md.
   */
  txRetryMs?: number;
  /** What-if: run the scanner at this nice level (0 = as the processor), as a background job would. */
  scannerNice: number;
  /** Extra processor environment (e.g. COMMIT_INTERVAL_MS=50), to try a setting; the default run sets none. */
  processorEnv: Record<string, string>;
  /** Write docs/benchmarks/*.json|svg and the results block of docs/benchmarks.md. */
  writeDocs: boolean;
  /** Rounds of the sweep comparison (the order alternates); 2 by default, 1 for --quick and --full. */
  rounds: number;
  /** Which sweeps to run, in this order (all three by default). */
  sweeps: Array<'blocking' | 'chunked' | 'relay'>;
  label: 'quick' | 'default' | 'full' | 'custom';
  /**
   * Which parts run: `main` is parts 1 and 2 (throughput, restore after it, the sweeps), `restore`
   * is part 3 (issue 13: restore, replica catch-up and memory of a large state, command-id
   * bytes, failover), `modes` is part 4 (issue 22: exactly-once v1 and v2 side by side), `cluster`
   * is part 5 (issue 23: the single broker next to a three-broker cluster, and broker kills), `budget` is part
   * 6 (issue 32: relay sweeps under latency budgets next to the in-loop chunked sweep). All by default.
   */
  parts: Array<'main' | 'restore' | 'modes' | 'cluster' | 'budget'>;
  /** Part 4 (issue 22): the partition counts exactly-once v1 and v2 run the steady load on, side by side. */
  modesPartitions: number[];
  /** Part 4: accounts the steady load touches, and the seconds measured per run after the warm-up. */
  modesKeys: number;
  modesSec: number;
  /** Part 3: keys of the large state, and of the state it is compared with (0: none). */
  restoreKeys: number;
  restoreBaseKeys: number;
  /** Part 3: keys of the state the failover runs on. */
  failoverKeys: number;
  /** Part 3's label: its sizes as they default, for --quick, or set by flags. */
  restoreLabel: 'quick' | 'default' | 'custom';
  /** Part 5: keys of its sweeps and events of its throughput run, the same on the single broker and the cluster. */
  clusterKeys: number;
  clusterEvents: number;
  /** Part 5: seconds a killed broker stays down before its container is started again. */
  clusterDownSec: number;
  /** Not a flag: part 5 sets it for its runs on the cluster (topics at RF 3, min.insync.replicas 2). */
  topicReplication?: TopicReplication;
}

/** The flags that size part 3 only: they leave the label of parts 1 and 2 alone. */
const RESTORE_SIZES = ['restoreKeys', 'restoreBaseKeys', 'failoverKeys'] as const;
/** And those that size part 5 only. */
const CLUSTER_SIZES = ['clusterKeys', 'clusterEvents', 'clusterDownSec'] as const;
/** And those of part 6 only (its keys and rate are --keys and --rate, as part 2's). */
const BUDGET_SIZES = ['budgets', 'budgetMaxLag', 'budgetSweepMaxSec'] as const;

const USAGE = `usage: pnpm bench [--quick | --full] [--part all|main|restore|modes|cluster|budget] [--keys N] [--rate R] [--events N]
                  [--chunk K] [--relay-rate R] [--relay-max-lag N] [--relay-budget B] [--baseline S] [--rounds N] [--profile]
                  [--budgets LIST] [--budget-max-lag N] [--budget-sweep-max-sec S]
                  [--restore-keys N] [--restore-base-keys N] [--failover-keys N]
                  [--cluster-keys N] [--cluster-events N] [--cluster-down-sec S]
                  [--processor-env NAME=VALUE] [--tx-retry-ms N] [--scanner-nice N]
                  [--sweeps LIST] [--no-docs]
  --part P        all (default): parts 1-6; main: parts 1 (throughput, restore) and 2 (sweeps), about
                  6 min on 2 cores; restore: part 3 only (issue 13: restore, replica catch-up and peak
                  RSS of --restore-keys and of --restore-base-keys keys, changelog bytes per entity
                  over 10 sweeps, failover after kill -9; pnpm bench:restore). Part 3 with 1,000,000
                  keys took 17 min on the 2 shared cores at a load average of 21 (the fill alone 2.7
                  min); the default run includes it anyway, so it takes parts 1-2 plus that;
                  modes: part 4 only (issue 22: exactly-once v1 and v2 side by side at the steady
                  load on --modes-partitions, then the backlog of part 1 once per mode), about 8 min;
                  cluster: part 5 only (issue 23: exactly-once throughput, the relay sweep and restore
                  on one broker and on a three-broker cluster at RF 3 / min ISR 2 in the same run, then
                  the longest commit gap per task when the changelog leader, and then the transaction
                  coordinator, is killed -9 during a sweep), under 15 min;
                  budget: part 6 only (issue 32: at --keys and --rate, the in-loop chunked sweep, then
                  one uncapped relay sweep per --budgets entry, the pace sampled from GET /scans/:id),
                  about 6-8 min
  --budgets LIST  part 6's relay budgets, in order (default 1.2x,1.5x,2x,off; 1.2x and off are judged)
  --budget-max-lag N  part 6's scanner MAX_COMMAND_LAG (default 10000, the scanner's own default)
  --budget-sweep-max-sec S  part 6 cuts a relay sweep still running S s after its scan was created
                  (default 60; --quick: 30) and reports its projected duration: the part's time bound
  --cluster-keys N   part 5's sweep keys (default 30000; --quick: 10000)
  --cluster-events N part 5's throughput events (default 100000; --quick: 30000)
  --cluster-down-sec S  seconds part 5's killed broker stays down (default 10)
  --modes-partitions LIST  part 4's partition counts (default 6,24)
  --modes-sec S   part 4's measured seconds per steady run (default 20; --quick: 8)
  --restore-keys N  part 3's large state (default 1000000; --quick: 50000)
  --restore-base-keys N  the state part 3 compares it with, side by side (default 200000; --quick: 20000; 0: none)
  --failover-keys N  the state of part 3's failover (default 200000; --quick: 20000)
  --keys N        keys loaded for the sweep comparison (default 200000; --full: 1000000)
  --rate R        steady event load during the sweeps, events/s (default 2000)
  --events N      events pre-produced for the throughput run (default 300000)
  --chunk K       keys per slice of the chunked in-loop sweep (default 1000)
  --relay-rate R  commands/s the relay emits at most (default 4000)
  --relay-max-lag N  command lag at which the relay pauses (default 2000)
  --relay-budget B   part 2's relay latency budget (1.2x, 300ms or off; default: none in the scan,
                     so the scanner's default SCAN_LATENCY_BUDGET, 1.2x, paces it under --relay-rate)
  --baseline S    seconds of baseline before each sweep (default 10)
  --rounds N      rounds of the three sweeps, order alternating (default 2; --quick, --full: 1)
  --quick         small sizes, to try it out (20000 keys, 60000 events)
  --profile       CPU-profile the processor during the throughput run
  --processor-env NAME=VALUE  processor setting to try (repeatable), e.g. COMMIT_INTERVAL_MS=50
  --sweeps LIST   which sweeps to run (default blocking,chunked,relay)
  --scanner-nice N what-if: run the scanner at nice level N (1..19), as a background job
  --tx-retry-ms N what-if: the processor's transactional producers retry from N ms (not 20)
  --no-docs       print only; leave docs/benchmarks* alone`;

export function parseOptions(argv: string[]): BenchOptions {
  const o: BenchOptions = {
    keys: 200_000,
    rate: 2_000,
    throughputEvents: 300_000,
    eventsPerAccount: 6,
    partitions: 6,
    chunkKeys: 1_000,
    relayRate: 4_000,
    relayMaxLag: 2_000,
    budgets: ['1.2x', '1.5x', '2x', 'off'],
    budgetMaxLag: 10_000,
    budgetSweepMaxSec: 60,
    warmupSec: 5,
    baselineSec: 10,
    tailSec: 3,
    sweepAllowanceSec: 45,
    profile: false,
    processorEnv: {},
    scannerNice: 0,
    writeDocs: true,
    rounds: 2,
    sweeps: ['blocking', 'chunked', 'relay'],
    label: 'default',
    parts: ['main', 'restore', 'modes', 'cluster', 'budget'],
    modesPartitions: [6, 24],
    modesKeys: 20_000,
    modesSec: 20,
    restoreKeys: 1_000_000,
    restoreBaseKeys: 200_000,
    failoverKeys: 200_000,
    restoreLabel: 'default',
    clusterKeys: 30_000,
    clusterEvents: 100_000,
    clusterDownSec: 10,
  };
  const explicit = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const num = (name: keyof BenchOptions, min: number): void => {
      const raw = argv[++i];
      const n = Number(raw);
      if (raw === undefined || !Number.isFinite(n) || n < min)
        throw new UsageError(`${flag} needs a number of at least ${min}, got ${raw}`);
      (o[name] as number) = Math.floor(n);
      explicit.add(name);
    };
    switch (flag) {
      case '--quick':
        o.label = 'quick';
        break;
      case '--full':
        o.label = 'full';
        break;
      case '--keys':
        num('keys', 1_000);
        break;
      case '--rate':
        num('rate', 10);
        break;
      case '--events':
        num('throughputEvents', 1_000);
        break;
      case '--chunk':
        num('chunkKeys', 1);
        break;
      case '--relay-rate':
        num('relayRate', 10);
        break;
      case '--relay-max-lag':
        num('relayMaxLag', 10);
        break;
      case '--rounds':
        num('rounds', 1);
        break;
      case '--baseline':
        num('baselineSec', 1);
        break;
      case '--part': {
        const part = argv[++i];
        if (
          part !== 'all' &&
          part !== 'main' &&
          part !== 'restore' &&
          part !== 'modes' &&
          part !== 'cluster' &&
          part !== 'budget'
        )
          throw new UsageError(`--part takes all, main, restore, modes, cluster or budget; got ${part}`);
        o.parts = part === 'all' ? ['main', 'restore', 'modes', 'cluster', 'budget'] : [part];
        break;
      }
      case '--modes-partitions': {
        const list = (argv[++i] ?? '').split(',').map(Number);
        if (list.length === 0 || !list.every((p) => Number.isInteger(p) && p >= 1 && p <= 256))
          throw new UsageError(`--modes-partitions takes a comma-separated list of partition counts (1-256)`);
        o.modesPartitions = list;
        explicit.add('modesPartitions');
        break;
      }
      case '--relay-budget': {
        const raw = argv[++i] ?? '';
        try {
          o.relayBudget = budgetLabel(parseBudget(raw));
        } catch (err) {
          throw new UsageError(`--relay-budget: ${(err as Error).message}`);
        }
        explicit.add('relayBudget');
        break;
      }
      case '--budgets': {
        const list = (argv[++i] ?? '').split(',').filter((b) => b !== '');
        try {
          o.budgets = list.map((b) => budgetLabel(parseBudget(b)));
        } catch (err) {
          throw new UsageError(`--budgets: ${(err as Error).message}`);
        }
        if (o.budgets.length === 0 || new Set(o.budgets).size !== o.budgets.length)
          throw new UsageError('--budgets takes a comma-separated list of distinct budgets, e.g. 1.2x,1.5x,2x,off');
        explicit.add('budgets');
        break;
      }
      case '--budget-max-lag':
        num('budgetMaxLag', 10);
        break;
      case '--budget-sweep-max-sec':
        num('budgetSweepMaxSec', 5);
        break;
      case '--modes-sec':
        num('modesSec', 5);
        break;
      case '--restore-keys':
        num('restoreKeys', 1_000);
        break;
      case '--restore-base-keys':
        num('restoreBaseKeys', 0);
        break;
      case '--failover-keys':
        num('failoverKeys', 1_000);
        break;
      case '--cluster-keys':
        num('clusterKeys', 1_000);
        break;
      case '--cluster-events':
        num('clusterEvents', 1_000);
        break;
      case '--cluster-down-sec':
        num('clusterDownSec', 1);
        break;
      case '--profile':
        o.profile = true;
        break;
      case '--sweeps': {
        const list = (argv[++i] ?? '').split(',');
        if (!list.every((m) => m === 'blocking' || m === 'chunked' || m === 'relay')) {
          throw new UsageError(
            `--sweeps takes a comma-separated list of blocking, chunked, relay; got ${list.join(',')}`,
          );
        }
        o.sweeps = list as BenchOptions['sweeps'];
        explicit.add('sweeps');
        break;
      }
      case '--scanner-nice':
        num('scannerNice', 0);
        break;
      case '--tx-retry-ms':
        num('txRetryMs', 1);
        break;
      case '--no-docs':
        o.writeDocs = false;
        break;
      case '--processor-env': {
        const pair = argv[++i] ?? '';
        const eq = pair.indexOf('=');
        if (eq < 1) throw new UsageError(`--processor-env needs NAME=VALUE, got ${pair}`);
        o.processorEnv[pair.slice(0, eq)] = pair.slice(eq + 1);
        explicit.add('processorEnv');
        break;
      }
      case '--help':
      case '-h':
        throw new UsageError('');
      default:
        throw new UsageError(`unknown flag ${flag}`);
    }
  }
  const preset = (name: keyof BenchOptions, value: number) => {
    if (!explicit.has(name)) (o[name] as number) = value;
  };
  if (o.label === 'quick') {
    preset('restoreKeys', 50_000);
    preset('restoreBaseKeys', 20_000);
    preset('failoverKeys', 20_000);
    preset('keys', 20_000);
    preset('throughputEvents', 60_000);
    preset('baselineSec', 5);
    preset('warmupSec', 3);
    preset('sweepAllowanceSec', 20);
    preset('budgetSweepMaxSec', 30);
    preset('rounds', 1);
    preset('modesKeys', 5_000);
    preset('modesSec', 8);
    preset('clusterKeys', 10_000);
    preset('clusterEvents', 30_000);
  } else if (o.label === 'full') {
    preset('keys', 1_000_000);
    preset('rounds', 1);
  }
  if (!explicit.has('sweepAllowanceSec') && o.label !== 'quick') {
    o.sweepAllowanceSec = Math.max(o.sweepAllowanceSec, relaySweepAllowanceSec(o.keys, o.relayRate));
  }
  if (o.restoreBaseKeys >= o.restoreKeys) {
    if (explicit.has('restoreBaseKeys'))
      throw new UsageError(
        `--restore-base-keys (${o.restoreBaseKeys}) must be below --restore-keys (${o.restoreKeys})`,
      );
    o.restoreBaseKeys = 0; // a smaller --restore-keys alone: nothing smaller to compare with
  }
  const restoreSized = RESTORE_SIZES.some((k) => explicit.has(k));
  o.restoreLabel = restoreSized ? 'custom' : o.label === 'quick' ? 'quick' : 'default';
  for (const k of [...RESTORE_SIZES, ...CLUSTER_SIZES, ...BUDGET_SIZES]) explicit.delete(k);
  if (o.label === 'default' && explicit.size > 0) o.label = 'custom';
  return o;
}

/**
 * Sweep work grows with the keys. The relay is rate-limited and backs off on lag: it was seen to
 * deliver a third to four fifths of its rate, so budget for a third.
 */
export function relaySweepAllowanceSec(keys: number, relayRate: number): number {
  return Math.ceil((keys * 0.3) / (relayRate / 3)) + 20;
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message ? `${message}\n${USAGE}` : USAGE);
    this.name = 'UsageError';
  }
}
