import { randomBytes } from 'node:crypto';
import { Kafka, type IHeaders, type KafkaMessage } from 'kafkajs';
import { watchConsumer } from './consumer-watch';
import { PartitionReader, type FetchedPart } from './partition-reader';
import { KafkaRuntimeError, KafkaRuntimeErrorCodes, OffsetOutOfRangeError } from './errors';
import { RestorePlan } from './restore-plan';
import { endOffsets } from './topics';

export interface RestoreRecord {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  /** The record's headers as fetched (e.g. the input positions its unit committed). */
  headers: IHeaders;
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
  /**
   * Checked before every fetch and apply: a partition no longer wanted (its task was revoked or
   * failed) leaves the restore, and nothing more is applied for it. Default: all are wanted.
   */
  wanted?: (partition: number) => boolean;
  /**
   * The log no longer holds a partition's next offset `at` (OFFSET_OUT_OF_RANGE: its start moved
   * past it, e.g. DeleteRecords): the restore continues it from `logStart` once this returns.
   * It must discard what was applied before if the gap may matter (a tombstone in it). Without
   * it, or if it throws, the partition fails (see RestoreSummary.failed).
   */
  onOffsetOutOfRange?: (partition: number, at: bigint, logStart: bigint) => void | Promise<void>;
  /** Called after each batch with the records restored so far and the total to restore. */
  onProgress?: (restored: number, total: number) => void;
  groupPrefix?: string;
  timeoutMs?: number;
  /** No progress (no fetch or join, for the group path) for this long fails the restore (retriably); default 60 s. */
  stallMs?: number;
  /**
   * false: read through a throw-away consumer group (the path for a kafkajs whose internals
   * are not recognised). Default: Fetch requests to the leaders, no group (see PartitionReader).
   */
  withoutGroup?: boolean;
  /** Fetch sizes of the direct path (default 4 MiB per partition, 16 MiB per fetch). */
  fetchBytes?: { perPartition: number; perFetch: number };
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
  /** Partitions that left the restore because their apply failed; the others were restored. */
  failed: Map<number, KafkaRuntimeError>;
}

/**
 * Replays a changelog from each partition's checkpoint to its current end (read_committed),
 * handing each fetched batch's records to `apply` as bytes: from the partitions' leaders
 * (PartitionReader), or else through a throw-away consumer group (restoreInGroup).
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
  if (target.size === 0) return { records: 0, millis: Date.now() - started, partitions: 0, failed: new Map() };
  const plan = new RestorePlan(req, start, target);

  const reader =
    req.withoutGroup === false
      ? null
      : await PartitionReader.open(req.kafka, req.topic, {
          maxBytesPerPartition: req.fetchBytes?.perPartition ?? MAX_BYTES_PER_PARTITION,
          maxBytes: req.fetchBytes?.perFetch ?? MAX_BYTES_PER_FETCH,
        });
  if (reader) {
    try {
      const restored = await readDirectly(reader, req, plan, Number(total));
      return { records: restored, millis: Date.now() - started, partitions: target.size, failed: plan.failed };
    } finally {
      await reader.close();
    }
  }
  return restoreInGroup(req, ends, plan, total, started);
}

function restoreRecord(m: KafkaMessage): RestoreRecord {
  return { offset: m.offset, key: m.key, value: m.value, headers: m.headers ?? {} };
}

/** Fetch sizes of a restore: bounded, so memory does not grow with the changelog. */
const MAX_BYTES_PER_PARTITION = 4 * 1024 * 1024;
const MAX_BYTES_PER_FETCH = 16 * 1024 * 1024;

/**
 * The restore loop on a PartitionReader. The next fetch is sent before the records of the last
 * one are applied, so the broker reads and sends while SQLite writes. A failed fetch is retried
 * (after a metadata refresh) a few times; no progress for `stallMs` fails the restore. A
 * partition whose offset the log no longer holds restarts at the log start (see RestorePlan).
 */
async function readDirectly(
  reader: PartitionReader,
  req: RestoreRequest,
  plan: RestorePlan<RestoreRecord>,
  total: number,
): Promise<number> {
  const deadline = Date.now() + (req.timeoutMs ?? 600_000);
  const stallMs = req.stallMs ?? 60_000;
  let lastProgress = Date.now();
  let restored = 0;
  let failures = 0;
  const fetchPending = () => {
    const left = plan.pending();
    return left.size > 0 ? reader.fetch(left) : undefined;
  };
  let inflight: Promise<FetchedPart[]> | undefined = fetchPending();
  try {
    while (inflight) {
      let parts: FetchedPart[];
      try {
        parts = await inflight;
        failures = 0;
      } catch (err) {
        inflight = undefined;
        // Retrying the same offset would fail the same way: move on from the log start.
        if (err instanceof OffsetOutOfRangeError && (await plan.restartOutOfRange(err).catch(() => 0)) > 0) {
          inflight = fetchPending();
          continue;
        }
        if (++failures > 5 || Date.now() > deadline) {
          throw new KafkaRuntimeError(KafkaRuntimeErrorCodes.RESTORE_FAILED, `fetching ${req.topic} failed`, {
            retriable: true,
            cause: err,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** failures));
        await reader.refresh().catch(() => undefined);
        inflight = fetchPending();
        continue;
      }
      const work: Array<{ part: FetchedPart; next: bigint }> = [];
      for (const part of parts) {
        const from = plan.position.get(part.partition)!;
        // A partition with nothing in this response stays where it is, whatever its stable
        // offset says: a response that reached its byte limit leaves the partitions after the
        // limit empty, and their records are still to come.
        const next = part.next;
        if (next <= from || !plan.isLive(part.partition)) continue;
        plan.position.set(part.partition, next);
        work.push({ part, next });
      }
      inflight = fetchPending();
      for (const { part, next } of work) {
        const records = part.messages.map(restoreRecord);
        restored += await plan.apply(part.partition, records, next);
        req.onProgress?.(restored, total);
      }
      const now = Date.now();
      if (work.length > 0) lastProgress = now;
      else if (now - lastProgress > stallMs || now > deadline) {
        throw new KafkaRuntimeError(
          KafkaRuntimeErrorCodes.RESTORE_FAILED,
          `restore of ${req.topic} made no progress for ${now - lastProgress} ms`,
          { retriable: true },
        );
      }
    }
  } catch (err) {
    void inflight?.catch(() => undefined); // abandoned: its outcome no longer matters
    if (err instanceof KafkaRuntimeError) throw err;
    throw new KafkaRuntimeError(KafkaRuntimeErrorCodes.RESTORE_FAILED, `applying ${req.topic} records failed`, {
      cause: err,
    });
  }
  return restored;
}

/**
 * The first restore path, kept for a kafkajs whose internals PartitionReader does not recognise.
 * kafkajs has no manual assignment: a consumer in a throw-away group owns every partition, seeks the
 * wanted ones and pauses the rest.
 */
async function restoreInGroup(
  req: RestoreRequest,
  ends: Map<number, bigint>,
  plan: RestorePlan<RestoreRecord>,
  total: bigint,
  started: number,
): Promise<RestoreSummary> {
  // kafkajs's consumer resets an out-of-range offset to the log start silently: check first.
  await plan.restartOutOfRange();
  const start = new Map(plan.position);
  const target = plan.target;
  const position = plan.position;
  const groupId = `${req.groupPrefix ?? 'restore'}-${randomBytes(6).toString('hex')}`;
  const consumer = req.kafka.consumer({
    groupId,
    readUncommitted: false,
    maxBytesPerPartition: MAX_BYTES_PER_PARTITION,
    maxBytes: MAX_BYTES_PER_FETCH,
    maxWaitTimeInMs: 50,
    allowAutoTopicCreation: false,
  });
  let restored = 0;
  let failure: unknown;
  const finished = () => plan.pending().size === 0;

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
        if (from === undefined || failure || !plan.isLive(batch.partition)) return;
        // A fetch may start before our seek lands: never apply what precedes the checkpoint.
        const records = batch.messages.filter((m) => BigInt(m.offset) >= from).map(restoreRecord);
        const next = BigInt(batch.lastOffset()) + 1n;
        if (next <= (position.get(batch.partition) ?? 0n) && records.length === 0) return;
        restored += await plan.apply(batch.partition, records, next);
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
  return { records: restored, millis: Date.now() - started, partitions: target.size, failed: plan.failed };
}
