import { randomBytes } from 'node:crypto';
import type { ChangelogReaderConfig, ChangelogReaderDone } from '../children/changelog-reader-child';
import { Child } from '../ipc';

/** The fetch settings the bare reader is run with: the faster one is the ceiling. */
export const READER_SETTINGS = {
  /** The processor's restore consumer's (kafka-runtime restorer.ts) at the time of writing. */
  large: { maxBytesPerPartition: 16 * 1024 * 1024, maxBytes: 64 * 1024 * 1024, maxWaitTimeInMs: 50 },
  /** kafkajs's consumer defaults (1 MiB per partition, 10 MiB per fetch). */
  defaults: { maxBytesPerPartition: 1024 * 1024, maxBytes: 10 * 1024 * 1024, maxWaitTimeInMs: 5_000 },
} as const;
export type ReaderSettings = keyof typeof READER_SETTINGS;

/** One bare read of a changelog, start to end. */
export interface BareRead {
  settings: ReaderSettings;
  records: number;
  /** connect() to the end of every partition: what a restore also pays (a throw-away group's join included). */
  ms: number;
  /** connect() to the group joined. */
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
