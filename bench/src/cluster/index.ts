import { log } from '../common';
import { instanceTransactionalId, type Admin, type Kafka } from '../lib';
import type { BenchOptions } from '../options';
import { relaySweepAllowanceSec } from '../options';
import { compareSweeps } from '../sweeps';
import { measureThroughput } from '../throughput';
import { killDuringSweep, type BrokerKill, type KillTarget } from './broker-kill';
import { side, type SideResult } from './figures';

/** One Kafka the part measures on: the single broker or the three-node cluster. */
export interface BrokerTarget {
  kafka: Kafka;
  admin: Admin;
  brokers: string[];
}

export interface ClusterPartResult {
  keys: number;
  events: number;
  rate: number;
  relayRate: number;
  partitions: number;
  single: SideResult;
  cluster: SideResult;
  kills: BrokerKill[];
  /** Every run ended in the oracle's state. */
  ok: boolean;
}

/** The instance id part 5 gives the processor, so the transactional id (v2) is known before it starts. */
export const BENCH_INSTANCE_ID = 'bench';

/**
 * Part 5 (issue 23): the exactly-once throughput run (with its restore) and the relay sweep under
 * the steady load, on the single broker and on the three-broker cluster (topics at RF 3, min ISR 2)
 * with the same sizes; then two more relay sweeps on the cluster, one with the changelog leader
 * killed -9 and one with the transaction coordinator killed -9.
 */
export async function measureClusterPart(
  single: BrokerTarget,
  cluster: BrokerTarget & { killer: KillTarget },
  o: BenchOptions,
  workDir: string,
): Promise<ClusterPartResult> {
  const sized: BenchOptions = {
    ...o,
    keys: o.clusterKeys,
    throughputEvents: o.clusterEvents,
    sweeps: ['relay'],
    rounds: 1,
    sweepAllowanceSec: Math.max(o.label === 'quick' ? 20 : 45, relaySweepAllowanceSec(o.clusterKeys, o.relayRate)),
    profile: false,
    processorEnv: { ...o.processorEnv, INSTANCE_ID: BENCH_INSTANCE_ID },
  };
  const replicated: BenchOptions = { ...sized, topicReplication: { factor: 3, minInsyncReplicas: 2 } };
  const on = (t: BrokerTarget, opts: BenchOptions) => [t.kafka, t.admin, t.brokers, opts, workDir] as const;

  log(`cluster: throughput of ${sized.throughputEvents} events on the single broker`);
  const singleThroughput = await measureThroughput(...on(single, sized));
  log(`cluster: throughput of ${sized.throughputEvents} events on the three-broker cluster`);
  const clusterThroughput = await measureThroughput(...on(cluster, replicated));
  // The other order for the sweeps, so drift in the machine's load does not favour one side.
  log(`cluster: relay sweep of ${sized.keys} keys on the three-broker cluster`);
  const clusterSweep = await compareSweeps(...on(cluster, replicated));
  log(`cluster: relay sweep of ${sized.keys} keys on the single broker`);
  const singleSweep = await compareSweeps(...on(single, sized));

  const kills: BrokerKill[] = [];
  for (const role of ['changelog-leader', 'transaction-coordinator'] as const) {
    log(`cluster: relay sweep with the ${role} killed -9 for ${o.clusterDownSec} s`);
    const transactionalIdOf = (appId: string) => instanceTransactionalId(appId, BENCH_INSTANCE_ID);
    kills.push(await killDuringSweep(role, { ...cluster, o: replicated, workDir, transactionalIdOf }));
  }
  const singleSide = side(singleThroughput, singleSweep.results[0]!);
  const clusterSide = side(clusterThroughput, clusterSweep.results[0]!);
  return {
    keys: sized.keys,
    events: sized.throughputEvents,
    rate: o.rate,
    relayRate: o.relayRate,
    partitions: o.partitions,
    single: singleSide,
    cluster: clusterSide,
    kills,
    ok:
      [singleSide, clusterSide].every((s) => s.throughput.stateMatchesOracle && s.sweep.stateMatchesOracle) &&
      kills.every((k) => k.stateMatchesOracle),
  };
}
