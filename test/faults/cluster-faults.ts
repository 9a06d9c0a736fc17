import {
  busiestLeader,
  groupCoordinatorOf,
  kafkaClient,
  partitionLeaders,
  shortIsrs,
  transactionCoordinatorOf,
  waitUntil,
} from '@state-relay/testkit';
import type { Admin } from 'kafkajs';
import { waitAllTasksOwned } from './faults';
import type { ScenarioContext } from './scenario';
import { faultsExactlyOnce } from './stack';

// The faults of a three-node cluster (FaultStack.start({ brokers: 3 }): KRaft in combined mode,
// topics at RF 3 / min.insync.replicas 2). Each ends when the system is whole again: every node
// back in every ISR of the deployment's topics and of Kafka's internal ones, every task owned by
// a ready processor, the scanner answering. What each proves: docs/faults.md.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What each node is to the deployment right now. */
interface Roles {
  /** The leader of each changelog partition. */
  changelogLeaders: number[];
  /** The transactional id of processor-1 (v2: its instance's; v1: task 0's) and its coordinator. */
  transactionalId: string;
  transactionCoordinator: number;
  groupCoordinator: number;
}

async function withAdmin<T>(ctx: ScenarioContext, f: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = ctx.kafka.admin();
  await admin.connect();
  try {
    return await f(admin);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

async function roles(ctx: ScenarioContext): Promise<Roles> {
  const owner = ctx.processors[0]!;
  // As the processor forms it (services/processor/src/kafka/instance-id.ts; INSTANCE_ID is the node's name, stack.ts).
  const transactionalId = faultsExactlyOnce() === 'v2' ? `${ctx.d.appId}-instance-${owner.name}` : `${ctx.d.appId}-0`;
  return withAdmin(ctx, async (admin) => ({
    changelogLeaders: await partitionLeaders(admin, ctx.d.changelogTopic),
    transactionalId,
    transactionCoordinator: await transactionCoordinatorOf(ctx.kafka, transactionalId),
    // The processor's group id is its APP_ID.
    groupCoordinator: await groupCoordinatorOf(admin, ctx.d.appId),
  }));
}

function describe(nodeId: number, r: Roles): string {
  const led = r.changelogLeaders.flatMap((l, p) => (l === nodeId ? [p] : []));
  return [
    `leads changelog partitions [${led.join(',')}]`,
    ...(r.transactionCoordinator === nodeId ? [`transaction coordinator of ${r.transactionalId}`] : []),
    ...(r.groupCoordinator === nodeId ? ['group coordinator'] : []),
  ].join(', ');
}

/** The deployment's topics and Kafka's internal ones that exist (the transaction log appears with the first transaction). */
async function watchedTopics(ctx: ScenarioContext, admin: Admin): Promise<string[]> {
  const { d } = ctx;
  const existing = new Set(await admin.listTopics());
  return [
    d.eventsTopic,
    d.commandsTopic,
    d.changelogTopic,
    d.resultsTopic,
    d.deadLetterTopic,
    '__consumer_offsets',
    '__transaction_state',
  ].filter((t) => existing.has(t));
}

/** The smallest ISR among the partitions of `topics` now, and how many partitions have no leader. */
async function isrLow(admin: Admin, topics: string[]): Promise<{ minIsr: number; leaderless: number }> {
  const { topics: meta } = await admin.fetchTopicMetadata({ topics });
  const partitions = meta.flatMap((t) => t.partitions);
  return {
    minIsr: Math.min(...partitions.map((p) => p.isr.length)),
    leaderless: partitions.filter((p) => p.leader < 0).length,
  };
}

/** Until every partition of the watched topics has a leader and all three nodes in its ISR. */
export async function waitEveryIsrComplete(ctx: ScenarioContext, timeoutMs = 180_000): Promise<void> {
  let last = 'no metadata yet';
  await waitUntil(
    () =>
      withAdmin(ctx, async (admin) => {
        const short = await shortIsrs(admin, await watchedTopics(ctx, admin));
        last = short.slice(0, 4).join('; ');
        return short.length === 0;
      }).catch((err: Error) => {
        last = err.message;
        return false;
      }),
    { timeoutMs, intervalMs: 1_000, message: `every node back in every ISR (short: ${last})` },
  ).catch((err: Error) => {
    err.message += ` (last seen: ${last})`;
    throw err;
  });
}

/** The system whole again: every node in every ISR, every service ready, every task owned. */
async function waitWhole(ctx: ScenarioContext): Promise<void> {
  await waitEveryIsrComplete(ctx);
  await Promise.all([...ctx.processors, ctx.scanner].map((n) => n.waitReady()));
  await waitAllTasksOwned(ctx);
  ctx.note('every node in every ISR, every task owned, the scanner ready');
}

/** The processors' instance transactions that failed so far (v2; v1 counts task failures). */
async function failedTransactions(ctx: ScenarioContext): Promise<number> {
  const counts = await Promise.all(
    ctx.processors.map((p) =>
      p
        .counter(
          faultsExactlyOnce() === 'v2' ? 'processor_instance_transactions_total' : 'processor_task_failures_total',
          faultsExactlyOnce() === 'v2' ? 'outcome="failed"' : '',
        )
        .catch(() => 0),
    ),
  );
  return counts.reduce((a, b) => a + b, 0);
}

export type NodeRole = 'changelog-leader' | 'transaction-coordinator' | 'group-coordinator';

/**
 * kill -9 of the node that has `role` for the deployment, then, after 2–15 s (below and past the
 * 9 s broker session timeout after which the controller fences it and moves its leaders), the same
 * container again with its log directories as the kill left them.
 */
export async function killNode(ctx: ScenarioContext, role: NodeRole): Promise<void> {
  const r = await roles(ctx);
  const victim =
    role === 'changelog-leader'
      ? busiestLeader(r.changelogLeaders)
      : role === 'transaction-coordinator'
        ? r.transactionCoordinator
        : r.groupCoordinator;
  const downMs = 2_000 + Math.floor(ctx.random() * 13_000);
  await ctx.stack.cluster.kill(victim);
  ctx.note(`killed node ${victim} (-9), the ${role}: ${describe(victim, r)}`);
  await sleep(downMs);
  await ctx.stack.cluster.start(victim);
  ctx.note(`node ${victim} started again after ${downMs} ms down`);
  await waitWhole(ctx);
}

/**
 * Each node in turn: a graceful stop (controlled shutdown: its leaders move first), a start, and
 * the next only once it is back in every ISR — what an operator's rolling upgrade does.
 */
export async function rollingRestart(ctx: ScenarioContext): Promise<void> {
  for (const { nodeId } of ctx.stack.cluster.nodes) {
    const r = await roles(ctx);
    await ctx.stack.stopBroker(nodeId);
    ctx.note(`stopped node ${nodeId} (graceful; ${describe(nodeId, r)})`);
    await ctx.stack.cluster.start(nodeId);
    await waitEveryIsrComplete(ctx);
    ctx.note(`node ${nodeId} back in every ISR`);
  }
  await waitWhole(ctx);
}

/**
 * One node cut off the network for 3–20 s (below and past the 9 s broker session and the 10 s
 * replica lag), then put back at its own addresses under its alias (stack.partitionBroker: from
 * every network it is on, so it keeps only its loopback and its published port stops answering).
 * The other two keep a quorum, fence it and take its leaders, and the ISRs shrink to them; when it
 * is back it catches up and rejoins every ISR.
 */
export async function partitionBroker(ctx: ScenarioContext): Promise<void> {
  const r = await roles(ctx);
  const victim = 1 + Math.floor(ctx.random() * ctx.stack.cluster.nodes.length);
  const ms = 3_000 + Math.floor(ctx.random() * 17_000);
  await ctx.stack.partitionBroker(victim);
  ctx.note(`partitioned node ${victim} off the cluster network for ${ms} ms (${describe(victim, r)})`);
  try {
    await sleep(ms);
  } finally {
    await ctx.stack.healBroker(victim);
  }
  ctx.note(`healed node ${victim}'s network at its own address`);
  await waitWhole(ctx);
}

/**
 * Two of the three nodes stopped (gracefully, one after the other) for 5–20 s: the ISRs fall to
 * the one node left, below min.insync.replicas=2, so no produce with acks=all and no transaction
 * can commit; with two of three controllers gone (combined mode) the metadata quorum is lost too.
 * The processor's transactions fail or wait; nothing may be lost; both nodes come back together
 * and it must resume by itself.
 */
export async function isrBelowMin(ctx: ScenarioContext): Promise<void> {
  const nodes = ctx.stack.cluster.nodes.map((n) => n.nodeId);
  const survivor = nodes[Math.floor(ctx.random() * nodes.length)]!;
  const stopped = nodes.filter((n) => n !== survivor);
  const ms = 5_000 + Math.floor(ctx.random() * 15_000);
  const failedBefore = await failedTransactions(ctx);
  const stopping = Date.now();
  for (const nodeId of stopped) await ctx.stack.stopBroker(nodeId);
  const at = Date.now();
  ctx.note(
    `stopped nodes ${stopped.join(' and ')} (graceful, in ${at - stopping} ms); node ${survivor} alone for ${ms} ms`,
  );
  // What the one node left says while the others are away (asked on its own host port).
  const alone = kafkaClient(
    [ctx.stack.cluster.nodes.find((n) => n.nodeId === survivor)!.broker],
    'fault-harness-isr',
  ).admin();
  const seen = await alone
    .connect()
    .then(async () => isrLow(alone, await watchedTopics(ctx, alone)))
    .catch((err: Error) => ({ error: err.message }))
    .finally(() => alone.disconnect().catch(() => undefined));
  ctx.note(`node ${survivor} alone: ${JSON.stringify(seen)}`);
  await sleep(Math.max(0, at + ms - Date.now()));
  ctx.note(`starting nodes ${stopped.join(' and ')} after ${Date.now() - at} ms`);
  await Promise.all(stopped.map((nodeId) => ctx.stack.cluster.start(nodeId)));
  ctx.note(`nodes ${stopped.join(' and ')} answer again, ${Date.now() - at} ms after the stops`);
  await waitWhole(ctx);
  ctx.note(`processor instance transactions failed meanwhile: ${(await failedTransactions(ctx)) - failedBefore}`);
}
