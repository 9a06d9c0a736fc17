import { kafkaClient, waitUntil } from '@state-relay/testkit';
import { inject } from './faults';
import { waitRecovered } from './recovery';
import { runScenario } from './scenario';
import { FaultStack, nodeAnswers } from './stack';

// The representative three-broker case of CI: the deployment on a KRaft cluster of three nodes
// (topics at RF 3, min.insync.replicas 2), and mid-sweep, under load, two of the three nodes
// stopped for 5–20 s so every ISR falls below min.insync.replicas: no transaction can commit
// meanwhile. Then the scenario's checks: the changelog equals the oracle version for version (no
// event applied twice), one first result per command, nothing acknowledged lost, the scan
// completes; and, before that, commits resume on every events partition. The other cluster
// faults run in the campaign (`pnpm faults --brokers 3`, docs/faults.md). FAULT_SEED replays it.

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));

describe('faults on three brokers during a sweep under load (containers)', () => {
  let stack: FaultStack;
  beforeAll(async () => {
    stack = await FaultStack.start({ brokers: 3 });
  }, 900_000);
  afterAll(async () => {
    await stack?.stop();
  }, 300_000);

  it('isr-below-min mid-scan: the processor waits, loses nothing, applies nothing twice, and resumes', async () => {
    const started = Date.now();
    try {
      const report = await runScenario(stack, {
        seed: SEED,
        faults: async (ctx) => {
          const at = await ctx.emitted(0.25);
          expect({
            scanStillWalking: at.status === 'running' && at.counts.emitted < ctx.seeded.matching.length,
          }).toEqual({ scanStillWalking: true });
          ctx.note(`injecting isr-below-min at ${at.counts.emitted}/${ctx.seeded.matching.length} emitted`);
          const since = Date.now();
          await inject(ctx, 'isr-below-min');
          // Events keep committing: new offsets on every events partition, new scan results.
          ctx.note(`recovered ${await waitRecovered(ctx, since)} ms after the first stop`);
        },
      });
      process.stdout.write(
        `\n[faults] isr-below-min on three brokers: seed ${SEED}, ${((Date.now() - started) / 1000).toFixed(0)} s, ` +
          `${report.events} events, ${report.matched} swept, ${report.duplicateResults} duplicate results\n  ${report.timeline.join('\n  ')}\n`,
      );
    } catch (err) {
      if (err instanceof Error)
        err.message = `[isr-below-min on three brokers; replay with FAULT_SEED=${SEED}] ${err.message}`;
      throw err;
    }
  }, 900_000);

  // partition-broker's heal, on its own (the campaign draws it): the node cut off every network
  // and put back must answer on its published port again, or every client on the host (the
  // harness, the load, the tally) loses it (stack.ts, republish()).
  it('a node cut off every network and healed answers on its published port again', async () => {
    const node = stack.cluster.nodes[stack.cluster.nodes.length - 1]!;
    await stack.partitionBroker(node.nodeId);
    try {
      // The cut reaches the published port too: a client that knows only this node gets nothing.
      await waitUntil(async () => !(await nodeAnswers(node.broker)), {
        timeoutMs: 20_000,
        intervalMs: 500,
        message: 'the cut node to stop answering',
      });
    } finally {
      await stack.healBroker(node.nodeId);
    }
    // A client that knows only this node reaches the whole cluster through it.
    const admin = kafkaClient([node.broker], 'healed-node-probe').admin();
    await admin.connect();
    try {
      expect((await admin.describeCluster()).brokers).toHaveLength(stack.cluster.nodes.length);
    } finally {
      await admin.disconnect();
    }
  }, 180_000);
});
