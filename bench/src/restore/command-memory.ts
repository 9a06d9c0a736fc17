import { AS_OF, log } from '../common';
import { createDeploymentTopics, newDeployment } from '../deployment';
import type { Admin, Kafka } from '../lib';
import { ProcessorRun } from '../processor-run';
import { ScannerProcess } from '../scanner-run';
import { rememberedBytes } from '../stored-entity';
import { ChangelogTail } from './changelog-tail';
import { accountKey, fillChangelog } from './fill';

export const SWEEPS = 10;

export interface SweepBytes {
  /** 0: as seeded, before any sweep. */
  sweep: number;
  /** Commands answered `applied` by the processor in this sweep (every key, when it touches them all). */
  applied: number;
  /** The changelog value of the first key, in bytes, and its bytes spent on remembering commands. */
  sampleBytes: number;
  sampleRememberedBytes: number;
  /** The same, the mean over every key. */
  meanBytes: number;
  meanRememberedBytes: number;
}

export interface CommandMemoryResult {
  keys: number;
  sampleKey: string;
  sweeps: SweepBytes[];
  /** Mean growth of a value per sweep after the first (the first also adds the field the sweeps set). */
  bytesPerSweep: number;
  ok: boolean;
  problems: string[];
}

/**
 * Changelog bytes per entity as sweeps pile up: SWEEPS real scans through the scanner's API,
 * each touching every key of a small state (set a field to a value of constant length, so the
 * value itself grows only at the first sweep), answered by the real processor; after each, the
 * latest changelog record of every key is read back.
 */
export async function measureCommandMemory(
  kafka: Kafka,
  admin: Admin,
  brokers: string[],
  keys: number,
  o: { partitions: number; processorEnv: Record<string, string>; txRetryMs?: number; scannerNice: number },
  workDir: string,
): Promise<CommandMemoryResult> {
  const d = newDeployment('cmdids', o.partitions, workDir);
  await createDeploymentTopics(admin, d);
  await fillChangelog(kafka, d.changelogTopic, keys, { seed: 17 });
  const sampleKey = accountKey(0, keys);
  const problems: string[] = [];
  const proc = new ProcessorRun(brokers, d, o);
  let scanner: ScannerProcess | undefined;
  const tail = new ChangelogTail(kafka, d.changelogTopic);
  try {
    await proc.ready();
    scanner = await ScannerProcess.start(d, brokers, { maxCommandLag: 10_000, nice: o.scannerNice });
    await scanner.ready();
    await tail.start();
    await tail.caughtUp(admin);
    const sweeps: SweepBytes[] = [measure(tail, sampleKey, 0, 0)];
    for (let s = 1; s <= SWEEPS; s++) {
      const scan = await scanner.createScan({
        condition: { field: 'createdAt', op: 'exists' },
        action: { set: { lastSweep: `sweep-${String(s).padStart(2, '0')}` } },
        asOf: AS_OF,
        options: {},
      });
      const done = await scanner.finished(scan.id);
      const applied = done.counts.results['applied'] ?? 0;
      if (applied !== keys) problems.push(`sweep ${s}: ${applied} of ${keys} commands applied`);
      await tail.caughtUp(admin);
      sweeps.push(measure(tail, sampleKey, s, applied));
    }
    log(`command memory: ${sampleKey} ${sweeps.map((x) => x.sampleBytes).join(' → ')} bytes over ${SWEEPS} sweeps`);
    const first = sweeps[1]!;
    const last = sweeps[SWEEPS]!;
    return {
      keys,
      sampleKey,
      sweeps,
      bytesPerSweep: (last.meanBytes - first.meanBytes) / (SWEEPS - 1),
      ok: problems.length === 0,
      problems,
    };
  } finally {
    await tail.stop(admin);
    await scanner?.stop();
    await proc.stop().catch((err: unknown) => log(`command memory: ${String(err)}`));
    await admin
      .deleteTopics({ topics: [d.eventsTopic, d.commandsTopic, d.changelogTopic, d.resultsTopic, d.deadLetterTopic] })
      .catch(() => undefined);
  }
}

function measure(tail: ChangelogTail, sampleKey: string, sweep: number, applied: number): SweepBytes {
  let bytes = 0;
  let remembered = 0;
  let count = 0;
  for (const { key, value } of tail.latest.values()) {
    if (value === null) continue;
    bytes += value.length;
    remembered += rememberedBytes(key, value);
    count++;
  }
  const sample = tail.latest.get(sampleKey);
  return {
    sweep,
    applied,
    sampleBytes: sample?.value?.length ?? NaN,
    sampleRememberedBytes: sample ? rememberedBytes(sample.key, sample.value) : NaN,
    meanBytes: bytes / Math.max(1, count),
    meanRememberedBytes: remembered / Math.max(1, count),
  };
}
