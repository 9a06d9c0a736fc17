import { randomBytes } from 'node:crypto';
import type { ChangelogReaderConfig, ChangelogReaderDone } from '../children/changelog-reader-child';
import { Child } from '../ipc';

/** How the bare reader reads: the fastest of them is the ceiling. */
export const READER_SETTINGS = {
  /** A kafkajs consumer with the restore's fetch sizes (kafka-runtime restorer.ts: 4 MiB per partition, 16 MiB per fetch). */
  consumer: { via: 'consumer', maxBytesPerPartition: 4 * 1024 * 1024, maxBytes: 16 * 1024 * 1024, maxWaitTimeInMs: 50 },
  /** A kafkajs consumer with its defaults (1 MiB per partition, 10 MiB per fetch). */
  'consumer-defaults': {
    via: 'consumer',
    maxBytesPerPartition: 1024 * 1024,
    maxBytes: 10 * 1024 * 1024,
    maxWaitTimeInMs: 5_000,
  },
  /** Fetch requests without a group, as the restore reads (kafka-runtime's PartitionReader, the restore's sizes). */
  direct: { via: 'direct', maxBytesPerPartition: 4 * 1024 * 1024, maxBytes: 16 * 1024 * 1024, maxWaitTimeInMs: 50 },
} as const;
export type ReaderSettings = keyof typeof READER_SETTINGS;

/** One bare read of a changelog, start to end. */
export interface BareRead {
  settings: ReaderSettings;
  records: number;
  /** Connecting to the end of every partition (a consumer's group join included). */
  ms: number;
  /** Connecting to the group joined (direct: to connected). */
  joinMs: number;
  recordsPerSec: number;
  /** From the group joined to the end: the fetch rate alone. */
  recordsPerSecAfterJoin: number;
}

/** The bare kafkajs consumer of children/changelog-reader-child.ts, once, to the changelog's end. */
export async function readBare(brokers: string[], topic: string, settings: ReaderSettings): Promise<BareRead> {
  const config: ChangelogReaderConfig = {
    brokers,
    topic,
    groupId: `bench-bare-reader-${randomBytes(4).toString('hex')}`,
    ...READER_SETTINGS[settings],
  };
  const child = Child.start('bare-reader', 'changelog-reader-child', config);
  try {
    const d = await child.next<ChangelogReaderDone>('done', 600_000);
    return {
      settings,
      records: d.records,
      ms: d.doneAt - d.connectAt,
      joinMs: d.joinedAt - d.connectAt,
      recordsPerSec: (d.records * 1000) / Math.max(1, d.doneAt - d.connectAt),
      recordsPerSecAfterJoin: (d.records * 1000) / Math.max(1, d.doneAt - d.joinedAt),
    };
  } finally {
    await child.stop(5_000);
  }
}

/** The best of the bare reads: the conservative ceiling for both ratios. */
export function ceilingOf(reads: BareRead[]): { recordsPerSec: number; recordsPerSecAfterJoin: number } {
  return {
    recordsPerSec: Math.max(...reads.map((r) => r.recordsPerSec)),
    recordsPerSecAfterJoin: Math.max(...reads.map((r) => r.recordsPerSecAfterJoin)),
  };
}
