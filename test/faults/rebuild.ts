import type { KeyedEvent } from '@state-relay/domain';
import { metricSum, waitUntil } from '@state-relay/testkit';
import { waitCaughtUp } from '../../services/processor/test/harness';
import { waitAllTasksOwned } from './faults';
import { AS_OF, produceAll } from './load';
import type { ScenarioContext } from './scenario';
import type { ServiceNode } from './stack';

// An interrupted rebuild: an instance with an empty state dir is killed (-9) while it rebuilds
// its stores from the changelog, and started again on what the kill left. It must carry on from
// the rebuild's checkpoint (the rebuild began less than delete.retention.ms ago), not from 0,
// and own every task again.

/** New accounts added first, so that a rebuild lasts long enough to be caught (never swept). */
const GROW_ACCOUNTS = 150_000;
/** Kills tried before the fault settles for a rebuild it could not catch. */
const ATTEMPTS = 3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function interruptRebuild(ctx: ScenarioContext): Promise<void> {
  const { d, kafka } = ctx;
  const tag = Math.floor(ctx.random() * 1e9).toString(36);
  const signUps: KeyedEvent[] = Array.from({ length: GROW_ACCOUNTS }, (_, i) => ({
    key: `rebuild-${tag}-${i}`,
    // Signed up at asOf: active for 30 more days, so the sweep never matches them.
    event: { id: `rebuild-${tag}-${i}`, type: 'signed_up', at: AS_OF, data: {} },
  }));
  await produceAll(kafka, d.eventsTopic, signUps);
  await waitCaughtUp(kafka, d.appId, d.eventsTopic, 180_000);
  ctx.note(`changelog grown by ${GROW_ACCOUNTS} accounts`);

  const victim = ctx.processors[Math.floor(ctx.random() * ctx.processors.length)]!;
  await victim.kill9();
  ctx.processors.splice(ctx.processors.indexOf(victim), 1);
  await ctx.stack.removeNode(victim);
  const node = await ctx.stack.startProcessor(d, { name: `${victim.name}-rebuilt`, wait: 'started' });
  ctx.processors.push(node);
  ctx.note(`killed ${victim.name} (-9); ${node.name} started with an empty state dir`);

  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const restored = await killWhileRestoring(node);
    if (restored === undefined) {
      ctx.note(`${node.name}'s restore ended before it could be caught (attempt ${attempt})`);
      break;
    }
    ctx.note(`killed ${node.name} (-9) mid-rebuild, ${restored} records restored (attempt ${attempt})`);
    await sleep(300 + Math.floor(ctx.random() * 700));
    await node.startAgain({ wait: false });
  }
  await node.waitReady();
  await waitAllTasksOwned(ctx);
  const changelog = await changelogRecordsAtMost(ctx);
  ctx.note(
    `${node.name} ready; restored ${await node.counter('processor_restore_records_total')} records since its last start (the changelog holds at most ${changelog})`,
  );
}

/** The changelog's end offsets summed: its records, plus its transaction markers. */
async function changelogRecordsAtMost(ctx: ScenarioContext): Promise<number> {
  const admin = ctx.kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(ctx.d.changelogTopic)).reduce((n, p) => n + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Polls the instance's metrics until it restores (records applied, tasks still restoring), then
 * kills it (-9) and returns how many records it had applied; undefined if its restore ended
 * first. The metrics only: a request is answered between two applied batches.
 */
async function killWhileRestoring(node: ServiceNode): Promise<number | undefined> {
  let restored: number | undefined;
  let ended = false;
  await waitUntil(
    async () => {
      const text = await node.metrics().catch(() => '');
      if (!text) return false;
      const applied = metricSum(text, 'processor_restore_records_total', '');
      const restoring = metricSum(text, 'processor_restoring_tasks', '');
      if (applied > 0 && restoring > 0) {
        await node.kill9();
        restored = applied;
        return true;
      }
      // Ended: records applied and nothing left to restore; or nothing to restore at all, ready
      // (the last kill landed just after a restore had finished: its store is complete).
      ended = restoring === 0 && (applied > 0 || (await node.isReady()));
      return ended;
    },
    { timeoutMs: 180_000, intervalMs: 10, message: `${node.name} to restore` },
  );
  return restored;
}
