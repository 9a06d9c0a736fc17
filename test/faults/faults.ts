import { waitUntil } from '@state-relay/testkit';
import type { ScenarioContext } from './scenario';

// The faults a scenario can inject, each ending when the system is whole again (every task
// owned by a ready processor, the scanner answering). None waits for the scan to finish.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type FaultName =
  'kill-processor' | 'kill-processor-empty-state' | 'kill-scanner' | 'restart-broker' | 'kill-broker' | 'rebalance';
/** One scenario each. */
export const FAULTS: readonly FaultName[] = [
  'kill-processor',
  'kill-processor-empty-state',
  'kill-scanner',
  'restart-broker',
  'rebalance',
];
/** What the random schedule draws from: the above, and an unclean broker death. */
export const SCHEDULE_POOL: readonly FaultName[] = [...FAULTS, 'kill-broker'];

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
export async function killBroker(ctx: ScenarioContext): Promise<void> {
  await ctx.stack.killBroker();
  ctx.note('broker killed (-9) and started again');
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
  }
}
