import { waitUntil } from '@state-relay/testkit';
import { addProcessor, leave, waitAllTasksOwned } from './faults';
import type { ScenarioContext } from './scenario';
import { TMPFS_STATE_DIR, type ServiceNode } from './stack';

// Faults of the infrastructure around a service rather than of its process: the network
// between it and the broker, and the disk under the processor's state directory.
// What the container runtime does here (Podman 4.3, Docker API): see docs/faults.md.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * How long a partition lasts: 3–20 s, so a draw falls below the processors' 10 s session
 * timeout (requests time out and are retried, the group does not move) or past it (the group
 * gives the cut-off instance's tasks away, the instance comes back a zombie).
 */
function partitionMs(ctx: ScenarioContext): number {
  return 3_000 + Math.floor(ctx.random() * 17_000);
}

/** How a partition goes; the campaign draws its length, a regression case fixes all of it. */
export interface PartitionOptions {
  ms?: number;
  /** Heal at another address (stack.heal): every connection the node had is black-holed; drawn (1 in 3) by default. */
  newAddress?: boolean;
  /** partitionProcessor: with a second instance (true) or alone (false); drawn by default. */
  peer?: boolean;
  /** partitionProcessor with a peer: cut off the peer (true) or processor-1 (false); drawn by default. */
  cutPeer?: boolean;
  /** How long the cut-off service may take to be ready again after the heal. */
  readyWithinMs?: number;
}

/**
 * Cuts `node` off the network for `ms`, then puts it back: at its own address (a link that comes
 * back) or, one draw in three, at a new one (every connection it had is black-holed).
 */
async function cutOff(ctx: ScenarioContext, node: ServiceNode, o: PartitionOptions): Promise<void> {
  const ms = o.ms ?? partitionMs(ctx);
  const newAddress = o.newAddress ?? ctx.random() < 1 / 3;
  await ctx.stack.partition(node);
  ctx.note(`partitioned ${node.name} from the broker for ${ms} ms`);
  try {
    await sleep(ms);
  } finally {
    await ctx.stack.heal(node, { newAddress });
  }
  ctx.note(`healed ${node.name}'s network${newAddress ? ' at a new address' : ''}`);
}

/**
 * A processor loses the broker and comes back. Half the draws partition the only instance (its
 * tasks have no owner meanwhile); the others partition one of two, so the other one takes the
 * tasks over past the session timeout and must fence the cut-off one, which must rejoin.
 */
export async function partitionProcessor(ctx: ScenarioContext, o: PartitionOptions = {}): Promise<void> {
  const peer = (o.peer ?? ctx.random() < 0.5) ? await addProcessor(ctx) : undefined;
  if (peer) ctx.note(`${peer.name} joined; tasks shared`);
  const victim = peer && (o.cutPeer ?? ctx.random() < 0.5) ? peer : ctx.processors[0]!;
  await cutOff(ctx, victim, o);
  await victim.waitReady(o.readyWithinMs);
  await waitAllTasksOwned(ctx);
  ctx.note(`every task owned again`);
  if (peer) await leave(ctx, peer);
}

/** The scanner loses the broker (its replica, its command producer, its results follower) and comes back. */
export async function partitionScanner(ctx: ScenarioContext, o: PartitionOptions = {}): Promise<void> {
  await cutOff(ctx, ctx.scanner, o);
  await ctx.scanner.waitReady(o.readyWithinMs);
}

/** A small tmpfs: big enough for the test's stores, filled in well under a second. */
const STATE_TMPFS_MIB = 64;

/**
 * The disk under a processor's state directory fills up, then space comes back. An instance
 * whose state dir is a tmpfs joins and takes some tasks; a root process in its container fills
 * the tmpfs, so SQLite's next write that needs a new page fails (SQLITE_FULL) after the Kafka
 * commit that carried it. The task must fail and recover by itself (restore from the changelog)
 * once the file is removed: nothing lost, nothing applied twice, no restart.
 */
export async function fillStateDisk(ctx: ScenarioContext): Promise<void> {
  const node = await addProcessor(ctx, undefined, { stateTmpfsMiB: STATE_TMPFS_MIB });
  ctx.note(`${node.name} joined with its state dir on a ${STATE_TMPFS_MIB} MiB tmpfs`);
  const failures = () => node.counter('processor_task_failures_total', 'kind="store"');
  const before = await failures();
  const filler = `${TMPFS_STATE_DIR}/.filler`;
  // dd stops at ENOSPC (and says so, exiting 1); df shows the result.
  const df = await node.execAsRoot([
    'sh',
    '-c',
    `dd if=/dev/zero of=${filler} bs=64k 2>/dev/null; df -k ${TMPFS_STATE_DIR}`,
  ]);
  ctx.note(`filled ${node.name}'s state dir: ${df.trim().split('\n').pop()}`);
  // Held while events and commands keep coming, until a store write has failed (or 20 s).
  const heldFrom = Date.now();
  const failed = await waitUntil(async () => (await failures()) > before, {
    timeoutMs: 20_000,
    intervalMs: 250,
  }).catch(() => false);
  await sleep(Math.max(0, heldFrom + 2_000 + Math.floor(ctx.random() * 3_000) - Date.now()));
  await node.execAsRoot(['rm', '-f', filler]);
  ctx.note(
    `freed ${node.name}'s state dir after ${Date.now() - heldFrom} ms full; ` +
      `store failures meanwhile: ${(await failures()) - before}${failed ? '' : ' (no write needed a new page)'}`,
  );
  await node.waitReady(120_000);
  await waitAllTasksOwned(ctx);
  expect({ stillRunning: await node.isRunning(), owns: (await node.tasks()).length > 0 }).toEqual({
    stillRunning: true,
    owns: true,
  });
  await leave(ctx, node);
}
