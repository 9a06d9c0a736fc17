import { loadavg } from 'node:os';
import { log } from '../common';
import type { Admin, Kafka } from '../lib';
import type { BenchOptions } from '../options';
import { measureCommandMemory, type CommandMemoryResult } from './command-memory';
import { measureFailover, type FailoverResult } from './failover';
import { measureStateSize, type StateSizeResult } from './state-size';

export { SPARSE_SWEEP } from './state-size';
export type { CommandMemoryResult } from './command-memory';
export type { FailoverResult } from './failover';
export type { StateSizeResult } from './state-size';

/** Keys of the small state the command-memory sweeps touch (all of them, every sweep). */
const COMMAND_MEMORY_KEYS = 1_000;

export interface RestorePartResult {
  /** The comparison size first (--restore-base-keys), then --restore-keys. */
  sizes: StateSizeResult[];
  commandMemory: CommandMemoryResult;
  failover: FailoverResult[];
  startedAt: string;
  durationSec: number;
  /** 1-minute load average when this part started and when it ended. */
  loadAverage: { start: number; end: number };
  ok: boolean;
}

/**
 * Part 3 (issue 13): restore and replica catch-up of a large state, memory in the size of the
 * state, changelog bytes per entity as sweeps pile up, and failover after kill -9. Each on a
 * deployment of its own, deleted when done.
 */
export async function measureRestorePart(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  o: BenchOptions,
  workDir: string,
): Promise<RestorePartResult> {
  const started = Date.now();
  const loadAtStart = round1(loadavg()[0]!);
  await warmUpGroupCoordinator(admin);
  const sizes: StateSizeResult[] = [];
  for (const keys of o.restoreBaseKeys > 0 ? [o.restoreBaseKeys, o.restoreKeys] : [o.restoreKeys]) {
    sizes.push(await measureStateSize(kafka, admin, brokers, keys, o, workDir));
  }
  log('restore part: changelog bytes per entity over 10 sweeps');
  const commandMemory = await measureCommandMemory(kafka, admin, brokers, COMMAND_MEMORY_KEYS, o, workDir);
  const failover: FailoverResult[] = [];
  for (const label of ['default', 'short'] as const) {
    failover.push(await measureFailover(kafka, admin, brokers, o.failoverKeys, label, o, workDir));
  }
  const problems = [...sizes.flatMap((s) => s.problems), ...commandMemory.problems];
  for (const p of problems) log(`restore part: ${p}`);
  return {
    sizes,
    commandMemory,
    failover,
    startedAt: new Date(started).toISOString(),
    durationSec: Math.round((Date.now() - started) / 1000),
    loadAverage: { start: loadAtStart, end: round1(loadavg()[0]!) },
    ok: problems.length === 0,
  };
}

/**
 * On a fresh broker (`--part restore` alone) the first consumer group makes the broker create
 * __consumer_offsets, which took seconds in the first bare read's join; do it before measuring.
 */
async function warmUpGroupCoordinator(admin: Admin): Promise<void> {
  const topic = `bench-warm-up-${Date.now()}`;
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  try {
    // Retried: the first answers are COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR while the topic loads.
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.fetchOffsets({ groupId: `${topic}-group`, topics: [topic] });
        return;
      } catch (err) {
        if (attempt >= 60 || (err as { retriable?: boolean }).retriable === false) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  } finally {
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  }
}

function round1(v: number): number {
  return Math.round(v * 10) / 10;
}
