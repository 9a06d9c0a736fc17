import { log } from '../common';
import type { Deployment } from '../deployment';
import {
  busiestLeader,
  longestCommitGaps,
  partitionLeaders,
  shortIsrs,
  transactionCoordinatorOf,
  type Admin,
  type CommitGap,
  type Kafka,
  type StartedKafkaCluster,
} from '../lib';
import type { BenchOptions } from '../options';
import type { ProcessorRun } from '../processor-run';
import { compareSweeps } from '../sweeps';
import { sweepFigures, type SideResult } from './figures';

export type KillRole = 'changelog-leader' | 'transaction-coordinator';

/** What part 5 needs of the cluster to kill and restart a node. */
export type KillTarget = Pick<StartedKafkaCluster, 'kill' | 'start'>;

/** Seconds into the sweep at which the broker is killed: the relay is emitting by then. */
export const KILL_AFTER_SEC = 2;

export interface BrokerKill {
  role: KillRole;
  victim: number;
  /** What the victim was to the deployment when it was killed. */
  victimRoles: string;
  /** The processor's transactional id (v2: its instance's), whose coordinator the second kill picks. */
  transactionalId: string;
  /** When the node was killed (epoch ms). */
  killedAt: number;
  /** From the sweep's start (the scan's creation) to the kill, the kill to the node started again, and to it answering and being listed. */
  killedAfterSweepMs: number;
  downMs: number;
  killToAnswerMs: number;
  /** From the kill to every partition of the deployment's and Kafka's internal topics having all three nodes in its ISR. */
  killToIsrsCompleteMs: number;
  /** Per task: the longest time between two commits carrying events that overlaps [kill, ISRs complete]. */
  gaps: CommitGap[];
  /** The longest such gap of any task in the baseline window before the sweep, for scale. */
  baselineGapMs: number;
  /** Processor transactions that ended in abort having sent something, from the kill to the end of the phase. */
  failedTransactions: number;
  sweep: SideResult['sweep'];
  processorWarnings: Record<string, number>;
  stateMatchesOracle: boolean;
}

interface KillContext {
  kafka: Kafka;
  admin: Admin;
  brokers: string[];
  killer: KillTarget;
  o: BenchOptions;
  workDir: string;
  /** The processor's transactional id in a deployment (v2: its instance's). */
  transactionalIdOf: (appId: string) => string;
}

/**
 * One relay sweep under the steady load on the cluster (part 2's phase, reused) with `role`'s node
 * killed -9 `KILL_AFTER_SEC` into the sweep and its container started again `clusterDownSec` later,
 * the victim picked as the fault campaign picks it (the node leading the most changelog
 * partitions, among equals not the coordinator; the transaction coordinator of the processor's
 * transactional id). The phase waits
 * until every ISR is complete again before its tail, then checks the state against the oracle.
 */
export async function killDuringSweep(role: KillRole, c: KillContext): Promise<BrokerKill> {
  let fault:
    | Pick<
        BrokerKill,
        | 'role'
        | 'victim'
        | 'victimRoles'
        | 'transactionalId'
        | 'killedAt'
        | 'downMs'
        | 'killToAnswerMs'
        | 'killToIsrsCompleteMs'
      >
    | undefined;
  let processor: ProcessorRun | undefined;
  const duringSweep = async (proc: ProcessorRun, d: Deployment) => {
    processor = proc;
    await sleep(KILL_AFTER_SEC * 1000);
    const leaders = await partitionLeaders(c.admin, d.changelogTopic);
    const transactionalId = c.transactionalIdOf(d.appId);
    const coordinator = await transactionCoordinatorOf(c.kafka, transactionalId);
    // Among nodes leading as many changelog partitions, one that is not the coordinator: the two
    // phases should not kill the same thing (each node leads two of six partitions).
    const victim = role === 'changelog-leader' ? busiestLeader(leaders, coordinator) : coordinator;
    const led = leaders.flatMap((l, p) => (l === victim ? [p] : []));
    const victimRoles = [
      `leads changelog partitions [${led.join(',')}]`,
      ...(coordinator === victim ? ["the processor's transaction coordinator"] : []),
    ].join(', ');
    const killedAt = Date.now();
    await c.killer.kill(victim);
    log(`cluster: killed node ${victim} (-9), the ${role}: ${victimRoles}`);
    await sleep(c.o.clusterDownSec * 1000);
    const startedAt = Date.now();
    await c.killer.start(victim);
    const answeredAt = Date.now();
    log(
      `cluster: node ${victim} started again after ${startedAt - killedAt} ms down; answers after ${answeredAt - killedAt} ms`,
    );
    await waitIsrsComplete(c.kafka, d);
    const completeAt = Date.now();
    log(`cluster: every ISR complete ${completeAt - killedAt} ms after the kill`);
    fault = {
      role,
      victim,
      victimRoles,
      transactionalId,
      killedAt,
      downMs: startedAt - killedAt,
      killToAnswerMs: answeredAt - killedAt,
      killToIsrsCompleteMs: completeAt - killedAt,
    };
  };
  const { results } = await compareSweeps(c.kafka, c.admin, c.brokers, c.o, c.workDir, duringSweep);
  const s = results[0]!;
  if (!fault || !processor) throw new Error(`cluster: the ${role} kill did not run`);
  const { killedAt } = fault;
  const commits = processor.log.eventCommits();
  const gaps = longestCommitGaps(commits, processor.tasks, killedAt, killedAt + fault.killToIsrsCompleteMs);
  // Commits up to the sweep's start only: a gap still open then (the fault's) is cut there.
  const before = commits.filter((x) => x.committedAt <= s.startedAt);
  const baseline = longestCommitGaps(before, processor.tasks, s.startedAt - c.o.baselineSec * 1000, s.startedAt);
  return {
    ...fault,
    killedAfterSweepMs: killedAt - s.startedAt,
    gaps,
    baselineGapMs: Math.max(...baseline.map((g) => g.ms)),
    failedTransactions: processor.log.transactionsBetween(killedAt, Date.now(), processor.tasks).failed,
    sweep: sweepFigures(s, s.work.emitted ?? 0),
    processorWarnings: s.processorWarnings,
    stateMatchesOracle: s.check.ok,
  };
}

/** Until every partition of the deployment's topics and of Kafka's internal ones has all its replicas in the ISR. */
async function waitIsrsComplete(kafka: Kafka, d: Deployment, timeoutMs = 180_000): Promise<void> {
  const topics = [d.eventsTopic, d.commandsTopic, d.changelogTopic, d.resultsTopic, d.deadLetterTopic];
  const deadline = Date.now() + timeoutMs;
  let last = 'no metadata yet';
  for (;;) {
    // A fresh admin each time: one connected to the killed node may hold a dead connection.
    const admin = kafka.admin({ retry: { retries: 0 } });
    const short = await admin
      .connect()
      .then(async () => {
        const existing = new Set(await admin.listTopics());
        const internal = ['__consumer_offsets', '__transaction_state'].filter((t) => existing.has(t));
        return shortIsrs(admin, [...topics, ...internal]);
      })
      .catch((err: Error) => [err.message])
      .finally(() => admin.disconnect().catch(() => undefined));
    if (short.length === 0) return;
    last = short.slice(0, 4).join('; ');
    if (Date.now() > deadline) throw new Error(`cluster: ISRs not complete in ${timeoutMs} ms (short: ${last})`);
    await sleep(1_000);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
