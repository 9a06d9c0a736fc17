import { waitUntil } from '@state-relay/testkit';
import type { Admin } from 'kafkajs';
import { waitAllTasksOwned } from './faults';
import type { ScenarioContext } from './scenario';

// A fault's recovery time: from its first action (a kill, a freeze, a cut cable) until the
// system is whole and moving again. "Whole": every processor and the scanner answer /readyz,
// every task is owned by exactly one ready instance. "Moving", checked only once whole: the
// processor group has committed new offsets on every events partition, and the scan has new
// results (or has nothing pending). It includes the fault's own length (a freeze lasts past
// the session timeout by design), which the campaign records separately.

interface Progress {
  committed: Map<number, bigint>;
  results: number;
  idle: boolean;
}

async function progress(ctx: ScenarioContext, admin: Admin): Promise<Progress> {
  const [offsets] = await admin.fetchOffsets({ groupId: ctx.d.appId, topics: [ctx.d.eventsTopic] });
  const scan = await ctx.api.get(ctx.scanId);
  return {
    committed: new Map(offsets!.partitions.map((p) => [p.partition, BigInt(p.offset)])),
    results: Object.values(scan.counts.results).reduce((a, b) => a + b, 0),
    idle: scan.counts.pending === 0 || scan.status !== 'running',
  };
}

/** Waits until the system has recovered from a fault that began at `since`; returns the ms since then. */
export async function waitRecovered(ctx: ScenarioContext, since: number, timeoutMs = 180_000): Promise<number> {
  await Promise.all([...ctx.processors, ctx.scanner].map((n) => n.waitReady(timeoutMs)));
  await waitAllTasksOwned(ctx, timeoutMs);
  const admin = ctx.kafka.admin();
  await admin.connect();
  try {
    const base = await waitUntil(() => progress(ctx, admin), { timeoutMs, message: 'the group offsets and the scan' });
    let last = base;
    await waitUntil(
      async () => {
        last = await progress(ctx, admin);
        const committed = [...base.committed].every(([p, o]) => (last.committed.get(p) ?? -1n) > o);
        return committed && (last.results > base.results || last.idle);
      },
      { timeoutMs, intervalMs: 200, message: 'new commits on every events partition and new scan results' },
    ).catch((err: Error) => {
      const at = (m: Map<number, bigint>) => [...m].map(([p, o]) => `p${p} ${o}`).join(', ');
      err.message += ` (committed then ${at(base.committed)}, now ${at(last.committed)}; results ${base.results} → ${last.results})`;
      throw err;
    });
  } finally {
    await admin.disconnect();
  }
  return Date.now() - since;
}
