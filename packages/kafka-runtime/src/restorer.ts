import { randomBytes } from 'node:crypto';
import { Kafka } from 'kafkajs';
import { watchConsumer } from './consumer-watch';
import { KafkaRuntimeError, KafkaRuntimeErrorCodes } from './errors';
import { endOffsets } from './topics';

export interface RestoreRecord {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
}

export interface RestoreRequest {
  kafka: Kafka;
  topic: string;
  /** Partition -> first offset to read (the task's checkpoint); null reads from the beginning. */
  from: Map<number, bigint | null>;
  /**
   * Receives each batch of a partition in offset order with the offset to resume from after
   * it. It should apply the records and that offset atomically (one SQLite transaction).
   */
  apply: (partition: number, records: RestoreRecord[], nextOffset: bigint) => void | Promise<void>;
  /** Called after each batch with the records restored so far and the total to restore. */
  onProgress?: (restored: number, total: number) => void;
  groupPrefix?: string;
  timeoutMs?: number;
  /** No fetch or join for this long fails the restore (retriably); default 60 s. */
  stallMs?: number;
  /**
   * The end offsets of every partition of the topic, read by the caller after it fenced the
   * tasks' earlier owners. Without them the end is read here, at the start.
   */
  ends?: Map<number, bigint>;
}

export interface RestoreSummary {
  records: number;
  millis: number;
  partitions: number;
}

/**
 * Replays a changelog from each partition's checkpoint to its current end (read_committed).
 * kafkajs has no manual assignment, so this uses a consumer in a throw-away group that owns
 * every partition of the changelog, seeks the wanted ones and pauses the rest.
 *
 * The end is read at the start: the caller must own the task's transactional id already
 * (initialised producer), so no open transaction of a previous owner can hide records.
 */
export async function restoreChangelog(req: RestoreRequest): Promise<RestoreSummary> {
  const started = Date.now();
  let ends = req.ends;
  if (!ends) {
    const admin = req.kafka.admin();
    await admin.connect();
    try {
      ends = await endOffsets(admin, req.topic);
    } finally {
      await admin.disconnect();
    }
  }

  // What each wanted partition still needs: [from, end).
  const start = new Map<number, bigint>();
  const target = new Map<number, bigint>();
  let total = 0n;
  for (const [partition, from] of req.from) {
    const end = ends.get(partition);
    if (end === undefined) {
      throw new KafkaRuntimeError(
        KafkaRuntimeErrorCodes.RESTORE_FAILED,
        `changelog ${req.topic} has no partition ${partition}`,
      );
    }
    const first = from ?? 0n;
    if (first >= end) continue;
    start.set(partition, first);
    target.set(partition, end);
    total += end - first;
  }
  if (target.size === 0) return { records: 0, millis: Date.now() - started, partitions: 0 };

  const groupId = `${req.groupPrefix ?? 'restore'}-${randomBytes(6).toString('hex')}`;
  const consumer = req.kafka.consumer({
    groupId,
    readUncommitted: false,
    maxBytesPerPartition: 16 * 1024 * 1024,
    maxBytes: 64 * 1024 * 1024,
    maxWaitTimeInMs: 50,
    allowAutoTopicCreation: false,
  });
  const position = new Map(start);
  let restored = 0;
  let failure: unknown;
  const finished = () => [...target].every(([p, end]) => (position.get(p) ?? 0n) >= end);

  // A restore consumer kafkajs gave up on, or one that hangs, would keep its task RESTORING
  // until the deadline: fail instead, retriably, so the task's recovery starts a new one.
  const watch = watchConsumer(consumer, {
    stallMs: req.stallMs ?? 60_000,
    onDead: (reason, err) => {
      failure ??= new KafkaRuntimeError(
        KafkaRuntimeErrorCodes.RESTORE_FAILED,
        `the restore consumer of ${req.topic} ${reason === 'crashed' ? 'crashed for good' : 'stopped fetching'}`,
        { retriable: true, ...(err ? { cause: err } : {}) },
      );
    },
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: req.topic, fromBeginning: true });
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      // Batches of only markers or aborted records skip eachBatch but still move us on.
      if (!target.has(payload.partition)) return;
      const next = BigInt(payload.lastOffset) + 1n;
      if (next > (position.get(payload.partition) ?? 0n)) position.set(payload.partition, next);
    });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const from = start.get(batch.partition);
        if (from === undefined || failure) return;
        // A fetch may start before our seek lands: never apply what precedes the checkpoint.
        const records = batch.messages
          .filter((m) => BigInt(m.offset) >= from)
          .map((m) => ({ offset: m.offset, key: m.key, value: m.value }));
        const next = BigInt(batch.lastOffset()) + 1n;
        if (next <= (position.get(batch.partition) ?? 0n) && records.length === 0) return;
        try {
          await req.apply(batch.partition, records, next);
        } catch (err) {
          failure = err;
          return;
        }
        restored += records.length;
        position.set(batch.partition, next);
        req.onProgress?.(restored, Number(total));
      },
    });
    for (const [partition, from] of start) consumer.seek({ topic: req.topic, partition, offset: from.toString() });
    const others = [...ends.keys()].filter((p) => !target.has(p));
    if (others.length > 0) consumer.pause([{ topic: req.topic, partitions: others }]);

    const deadline = Date.now() + (req.timeoutMs ?? 600_000);
    while (!finished() && !failure) {
      if (Date.now() > deadline) {
        throw new KafkaRuntimeError(
          KafkaRuntimeErrorCodes.RESTORE_FAILED,
          `restore of ${req.topic} did not reach the end in time`,
          {
            retriable: true,
          },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (failure) {
      if (failure instanceof KafkaRuntimeError) throw failure;
      throw new KafkaRuntimeError(KafkaRuntimeErrorCodes.RESTORE_FAILED, `applying ${req.topic} records failed`, {
        cause: failure,
      });
    }
  } finally {
    watch.stop();
    await consumer.disconnect().catch(() => undefined);
    const cleanup = req.kafka.admin();
    await cleanup
      .connect()
      .then(() => cleanup.deleteGroups([groupId]))
      .catch(() => undefined)
      .finally(() => cleanup.disconnect().catch(() => undefined));
  }
  return { records: restored, millis: Date.now() - started, partitions: target.size };
}
