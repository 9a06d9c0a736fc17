import { waitUntil } from '@state-relay/testkit';
import { isrBelowMin, killNode, partitionBroker, rollingRestart } from './cluster-faults';
import { fillStateDisk, partitionProcessor, partitionScanner } from './infrastructure-faults';
import { poisonRecords } from './poison';
import { interruptRebuild } from './rebuild';
import type { ScenarioContext } from './scenario';
import { faultsExactlyOnce, type BrokerCount, type ProcessorOptions, type ServiceNode } from './stack';

// The faults a scenario can inject, each ending when the system is whole again (every task
// owned by a ready processor, the scanner answering). None waits for the scan to finish.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type FaultName =
  | 'kill-processor'
  | 'kill-processor-empty-state'
  | 'kill-scanner'
  | 'restart-broker'
  | 'kill-broker'
  | 'rebalance'
  | 'freeze-processor'
  | 'freeze-across-rebalance'
  | 'expire-transaction'
  | 'partition-processor'
  | 'partition-scanner'
  | 'state-disk-full'
  | 'poison-record'
  | 'interrupted-rebuild'
  | ClusterFaultName;
/** The faults of a three-node cluster (cluster-faults.ts). */
export type ClusterFaultName =
  | 'kill-changelog-leader'
  | 'kill-transaction-coordinator'
  | 'kill-group-coordinator'
  | 'rolling-restart'
  | 'partition-broker'
  | 'isr-below-min';
/** One scenario each. */
export const FAULTS: readonly FaultName[] = [
  'kill-processor',
  'kill-processor-empty-state',
  'kill-scanner',
  'restart-broker',
  'rebalance',
  'freeze-processor',
  'expire-transaction',
  'partition-processor',
  'partition-scanner',
  'state-disk-full',
  'poison-record',
  'interrupted-rebuild',
];
/**
 * What the random schedule draws from: the above, an unclean broker death, and a freeze across a
 * rebalance (issue 31.1's interleaving; drawn by campaigns, not one of CI's one-fault scenarios, to
 * keep `.ci/run` within its time).
 */
export const SCHEDULE_POOL: readonly FaultName[] = [...FAULTS, 'kill-broker', 'freeze-across-rebalance'];
export const CLUSTER_FAULTS: readonly ClusterFaultName[] = [
  'kill-changelog-leader',
  'kill-transaction-coordinator',
  'kill-group-coordinator',
  'rolling-restart',
  'partition-broker',
  'isr-below-min',
];
/**
 * On three brokers: the service faults, without the single broker's restart and kill (the
 * cluster's own kills and rolling restart aim at the node that matters to the deployment, see
 * docs/faults.md), and each cluster fault twice, so that about half of the faults drawn are the
 * cluster's (the service faults already have their 50-run campaign on one broker).
 */
export const CLUSTER_SCHEDULE_POOL: readonly FaultName[] = [
  ...SCHEDULE_POOL.filter((f) => f !== 'restart-broker' && f !== 'kill-broker'),
  ...CLUSTER_FAULTS,
  ...CLUSTER_FAULTS,
];

/** The pool a campaign on `brokers` brokers draws from. */
export function schedulePool(brokers: BrokerCount): readonly FaultName[] {
  return brokers === 3 ? CLUSTER_SCHEDULE_POOL : SCHEDULE_POOL;
}

/** Every task owned by exactly one ready instance. */
export async function waitAllTasksOwned(ctx: ScenarioContext, timeoutMs = 180_000): Promise<void> {
  const all = Array.from({ length: ctx.d.partitions }, (_, i) => i);
  await waitUntil(
    async () => {
      const owned = (await Promise.all(ctx.processors.map((p) => p.tasks()))).flat().sort((a, b) => a - b);
      return JSON.stringify(owned) === JSON.stringify(all);
    },
    {
      timeoutMs,
      intervalMs: 500,
      message: `tasks ${all.join(',')} to be owned by ${ctx.processors.map((p) => p.name).join(', ')}`,
    },
  );
}

/**
 * kill -9 of a processor container. `emptyState`: it never comes back; a new container with an
 * empty state volume takes its place and restores every task from the changelog. Otherwise the
 * same container starts again with the SQLite files the kill left behind.
 */
export async function killProcessor(ctx: ScenarioContext, options: { emptyState: boolean }): Promise<void> {
  const victim = ctx.processors[Math.floor(ctx.random() * ctx.processors.length)]!;
  await victim.kill9();
  ctx.note(`killed ${victim.name} (-9)`);
  // The scanner and the load go on meanwhile. Kept short: on a shared machine another test run's
  // runtime bootstrap sweeps away stopped Testcontainers containers (scripts/container-runtime.sh).
  await sleep(500 + Math.floor(ctx.random() * 1_500));
  if (options.emptyState) {
    ctx.processors.splice(ctx.processors.indexOf(victim), 1);
    await ctx.stack.removeNode(victim);
    const replacement = await ctx.stack.startProcessor(ctx.d, { name: `${victim.name}-fresh` });
    ctx.processors.push(replacement);
    ctx.note(`${replacement.name} started with an empty state dir`);
  } else {
    await victim.startAgain();
    ctx.note(`${victim.name} started again (same container and volume)`);
  }
  await waitAllTasksOwned(ctx);
}

/** kill -9 of the scanner container; the same container starts again and resumes the scan. */
export async function killScanner(ctx: ScenarioContext): Promise<void> {
  await ctx.scanner.kill9();
  ctx.note('killed the scanner (-9)');
  await sleep(500 + Math.floor(ctx.random() * 1_500)); // short, as for killProcessor
  await ctx.scanner.startAgain();
  ctx.note('scanner started again');
}

/** The broker container restarts; every client must find it again at the same address. */
export async function restartBroker(ctx: ScenarioContext): Promise<void> {
  await ctx.stack.restartBroker();
  ctx.note('broker restarted');
  await Promise.all([...ctx.processors, ctx.scanner].map((n) => n.waitReady()));
  await waitAllTasksOwned(ctx);
}

/** kill -9 of the broker, then the same container again (its log directory as the kill left it). */
export async function killBroker(ctx: ScenarioContext, options: { downMs?: number } = {}): Promise<void> {
  await ctx.stack.killBroker(options);
  ctx.note(`broker killed (-9) and started again${options.downMs ? ` after ${options.downMs} ms` : ''}`);
  await Promise.all([...ctx.processors, ctx.scanner].map((n) => n.waitReady()));
  await waitAllTasksOwned(ctx);
}

/** A second processor instance joins (tasks move, restore), works a while, then leaves (SIGTERM). */
export async function rebalance(ctx: ScenarioContext): Promise<void> {
  const joiner = await ctx.stack.startProcessor(ctx.d, { name: `processor-${ctx.processors.length + 1}` });
  ctx.processors.push(joiner);
  ctx.note(`${joiner.name} joined`);
  await waitUntil(async () => (await joiner.tasks()).length > 0, {
    timeoutMs: 120_000,
    message: `${joiner.name} to own a task`,
  });
  await waitAllTasksOwned(ctx);
  ctx.note(
    `tasks shared: ${JSON.stringify(await Promise.all(ctx.processors.map(async (p) => [p.name, await p.tasks()])))}`,
  );
  await sleep(3_000 + Math.floor(ctx.random() * 3_000));
  ctx.processors.splice(ctx.processors.indexOf(joiner), 1);
  await ctx.stack.removeNode(joiner); // graceful: SIGTERM, then removal
  ctx.note(`${joiner.name} left`);
  await waitAllTasksOwned(ctx);
}

/** Another instance joins and the tasks are shared; returns it. */
export async function addProcessor(
  ctx: ScenarioContext,
  env?: Record<string, string>,
  options: Omit<ProcessorOptions, 'name' | 'env'> = {},
): Promise<ServiceNode> {
  const joiner = await ctx.stack.startProcessor(ctx.d, {
    ...options,
    name: `processor-${ctx.processors.length + 1}`,
    ...(env ? { env } : {}),
  });
  ctx.processors.push(joiner);
  await waitUntil(async () => (await joiner.tasks()).length > 0, {
    timeoutMs: 120_000,
    message: `${joiner.name} to own a task`,
  });
  await waitAllTasksOwned(ctx);
  return joiner;
}

/**
 * Under a light load a task's transaction is open (records sent, no EndTxn) only a few percent of
 * the time, and each check costs a JVM start inside the broker container.
 */
const FREEZE_ATTEMPTS = 60;

/**
 * Freezes `node` (SIGSTOP) at a moment when one of its transactions is open on the broker
 * (records sent, no EndTxn), as the broker itself reports it; tries again at another moment
 * until it lands. Returns the open transactional ids and when the freeze began.
 */
async function freezeMidTransaction(ctx: ScenarioContext, node: ServiceNode): Promise<{ open: string[]; at: number }> {
  for (let attempt = 1; attempt <= FREEZE_ATTEMPTS; attempt++) {
    // Its own tasks' transactional ids: another instance's open transaction proves nothing here.
    // EXACTLY_ONCE=v2: one transactional id per instance (INSTANCE_ID is the node's name, see stack.ts).
    const own = new Set(
      faultsExactlyOnce() === 'v2'
        ? [`${ctx.d.appId}-instance-${node.name}`]
        : (await node.tasks()).map((t) => `${ctx.d.appId}-${t}`),
    );
    const at = Date.now();
    await node.freeze();
    let open = (await ctx.stack.ongoingTransactions(`${ctx.d.appId}-`)).filter((id) => own.has(id));
    // A short transaction timeout (expire-transaction's 3 s) can run out while the command above
    // starts its JVM on a loaded machine: a rollback for timeout after the freeze began proves
    // the transaction was open when it did (a campaign under load never caught one in 60 freezes).
    if (open.length === 0)
      open = (await ctx.stack.transactionsTimedOutSince(`${ctx.d.appId}-`, at).catch(() => [])).filter((id) =>
        own.has(id),
      );
    if (open.length > 0) {
      ctx.note(`froze ${node.name} with its transaction(s) ${open.join(', ')} open (attempt ${attempt})`);
      return { open, at };
    }
    await node.thaw();
    await sleep(20 + Math.floor(ctx.random() * 200));
  }
  throw new Error(`never caught ${node.name} with a transaction of its own open in ${FREEZE_ATTEMPTS} freezes`);
}

/**
 * The zombie: an owner frozen between a transaction's sends and its commit, past the session
 * timeout. The group gives its tasks to the other instance, which fences it (aborting the
 * open transaction) and carries on; then the zombie thaws with its old transaction and its
 * old assignment in memory. Nothing it held may commit; it must notice and rejoin.
 */
export async function freezeProcessor(ctx: ScenarioContext): Promise<void> {
  const joiner = await addProcessor(ctx);
  const victim = ctx.random() < 0.5 ? joiner : ctx.processors[0]!;
  const others = ctx.processors.filter((p) => p !== victim);
  const all = Array.from({ length: ctx.d.partitions }, (_, i) => i);
  await freezeMidTransaction(ctx, victim);
  await waitUntil(
    async () => {
      const owned = (await Promise.all(others.map((p) => p.tasks()))).flat().sort((a, b) => a - b);
      return JSON.stringify(owned) === JSON.stringify(all);
    },
    { timeoutMs: 90_000, intervalMs: 500, message: `the frozen ${victim.name}'s tasks to move` },
  );
  ctx.note(`${others.map((o) => o.name).join(', ')} took every task`);
  await sleep(2_000 + Math.floor(ctx.random() * 2_000)); // the new owner works the moved tasks
  await victim.thaw();
  ctx.note(`thawed ${victim.name}`);
  // It finds itself fenced (its commit) or revoked (its rejoin) and drops what it held.
  await waitUntil(async () => /task failed \(|task revoked/.test(await victim.logs()), {
    timeoutMs: 60_000,
    message: `${victim.name} to notice it was fenced`,
  });
  await waitAllTasksOwned(ctx);
  ctx.note(`tasks shared again after the thaw`);
  await leave(ctx, joiner);
}

/**
 * Frozen mid-commit across a rebalance (issue 31.1): an instance frozen with its transaction open
 * (shorter than its session) while another member joins. The group waits for it in
 * PreparingRebalance; it thaws there with its transaction, its queued units and its old assignment
 * in memory, rejoins into the new generation (which moves some of its tasks to the joiner) and
 * must commit nothing of a moved task under that generation.
 */
export async function freezeAcrossRebalance(ctx: ScenarioContext): Promise<void> {
  const victim = await addProcessor(ctx, { SESSION_TIMEOUT_MS: '45000' });
  await freezeMidTransaction(ctx, victim);
  const joining = addProcessor(ctx);
  joining.catch(() => undefined); // awaited below; a failure meanwhile must not go unhandled
  const admin = ctx.kafka.admin();
  await admin.connect();
  try {
    // Thaw once the joiner's JoinGroup has opened the rebalance (or after 30 s: then mid-start).
    await waitUntil(
      async () => {
        const { groups } = await admin.describeGroups([ctx.d.appId]);
        return groups[0]?.state === 'PreparingRebalance';
      },
      { timeoutMs: 30_000, intervalMs: 200, message: 'the joiner to open a rebalance' },
    ).catch(() => ctx.note('no rebalance seen within 30 s; thawing anyway'));
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  await sleep(Math.floor(ctx.random() * 1_500));
  await victim.thaw();
  ctx.note(`thawed ${victim.name} inside the rebalance`);
  const joiner = await joining;
  await waitAllTasksOwned(ctx);
  ctx.note(`tasks shared again after the rebalance`);
  await leave(ctx, joiner);
  await leave(ctx, victim);
}

/** `node` leaves gracefully (SIGTERM, then removal) and the others take its tasks. */
export async function leave(ctx: ScenarioContext, node: ServiceNode): Promise<void> {
  ctx.processors.splice(ctx.processors.indexOf(node), 1);
  await ctx.stack.removeNode(node);
  ctx.note(`${node.name} left`);
  await waitAllTasksOwned(ctx);
}

/**
 * A transaction held open past TRANSACTION_TIMEOUT_MS (a freeze shorter than the session): the
 * broker aborts it and bumps the producer epoch. The instance still owns its tasks, finds its
 * producer fenced, and must re-enter them by itself — no restart, nothing paused forever.
 */
export async function expireTransaction(ctx: ScenarioContext): Promise<void> {
  const timeoutMs = 3_000;
  const node = await addProcessor(ctx, {
    TRANSACTION_TIMEOUT_MS: String(timeoutMs),
    SESSION_TIMEOUT_MS: '45000',
  });
  const before = await node.counter('processor_task_failures_total');
  const { at, open } = await freezeMidTransaction(ctx, node);
  // The timeout, the broker's 1 s abort sweep, and a margin.
  await sleep(Math.max(0, at + timeoutMs + 3_500 - Date.now()));
  await node.thaw();
  ctx.note(`thawed ${node.name} after ${Date.now() - at} ms`);
  await waitUntil(async () => (await node.counter('processor_task_failures_total')) > before, {
    timeoutMs: 60_000,
    message: `${node.name} to find its expired transaction fenced`,
  }).catch(async (err: Error) => {
    const lines = (await node.logs()).split('\n').filter((l) => /"msg":"(task|tasks|joined)/.test(l));
    lines.push(...(await ctx.stack.describeTransactions(open)));
    lines.push(JSON.stringify(await node.env()));
    const metrics = (await (await fetch(`${node.url}/metrics`)).text())
      .split('\n')
      .filter((l) => l.startsWith('processor_task'));
    err.message += `\n${lines.map((l) => l.slice(0, 400)).join('\n')}\n${metrics.join('\n')}`;
    throw err;
  });
  ctx.note(
    `${node.name} saw the expiry: ${await node.counter('processor_task_failures_total', 'kind="fenced"')} fenced`,
  );
  const probe = () => fetch(`${node.url}/readyz`, { signal: AbortSignal.timeout(3_000) }).catch(() => undefined);
  await waitUntil(async () => (await probe())?.status === 200, {
    timeoutMs: 60_000,
    message: `${node.name} to re-enter its tasks by itself`,
  });
  expect({ stillRunning: await node.isRunning(), owns: (await node.tasks()).length > 0 }).toEqual({
    stillRunning: true,
    owns: true,
  });
  await waitAllTasksOwned(ctx);
  await leave(ctx, node);
}

export async function inject(ctx: ScenarioContext, fault: FaultName): Promise<void> {
  switch (fault) {
    case 'kill-processor':
      return killProcessor(ctx, { emptyState: false });
    case 'kill-processor-empty-state':
      return killProcessor(ctx, { emptyState: true });
    case 'kill-scanner':
      return killScanner(ctx);
    case 'restart-broker':
      return restartBroker(ctx);
    case 'kill-broker':
      return killBroker(ctx);
    case 'rebalance':
      return rebalance(ctx);
    case 'freeze-processor':
      return freezeProcessor(ctx);
    case 'freeze-across-rebalance':
      return freezeAcrossRebalance(ctx);
    case 'expire-transaction':
      return expireTransaction(ctx);
    case 'partition-processor':
      return partitionProcessor(ctx);
    case 'partition-scanner':
      return partitionScanner(ctx);
    case 'state-disk-full':
      return fillStateDisk(ctx);
    case 'poison-record':
      return poisonRecords(ctx);
    case 'interrupted-rebuild':
      return interruptRebuild(ctx);
    case 'kill-changelog-leader':
      return killNode(ctx, 'changelog-leader');
    case 'kill-transaction-coordinator':
      return killNode(ctx, 'transaction-coordinator');
    case 'kill-group-coordinator':
      return killNode(ctx, 'group-coordinator');
    case 'rolling-restart':
      return rollingRestart(ctx);
    case 'partition-broker':
      return partitionBroker(ctx);
    case 'isr-below-min':
      return isrBelowMin(ctx);
  }
}
