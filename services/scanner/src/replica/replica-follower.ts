import { decodeKey, isDecodeError } from '@state-relay/contracts';
import {
  DEFAULT_DELETE_RETENTION_MS,
  deleteRetentionMs,
  endOffsets,
  OWNER_REPLACES,
  ReplacingConsumer,
  type AdminCalls,
} from '@state-relay/kafka-runtime';
import type { ChangelogRecord, ReplicaStore } from '@state-relay/store';
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { AbortedError, ReplicaBehindError } from '../errors';
import type { PartitionLag, ScannerMetrics } from '../metrics';
import { sleep } from '../scans/wait';

export interface ReplicaFollowerDeps {
  kafka: Kafka;
  admin: Pick<AdminCalls, 'fetchTopicOffsets' | 'describeConfigs'>;
  topic: string;
  groupId: string;
  replica: ReplicaStore;
  logger: Logger;
  metrics: ScannerMetrics;
  /** How often the changelog end offsets are refreshed for the lag; default 1000 ms. */
  endsRefreshMs?: number;
  /** How often the replica's WAL is checkpointed (PASSIVE); default 5000 ms. */
  checkpointMs?: number;
}

/** No fetch, join or rebalance for this long: the changelog consumer is hung, and is replaced. */
const STALL_MS = 30_000;

/**
 * Keeps the replica: consumes the changelog (read_committed) and applies each batch with its
 * offsets in one SQLite transaction, so a restart resumes exactly. SQLite holds the position: the
 * group (one member) never commits; on every join each partition is sought to the stored offset.
 */
export class ReplicaFollower {
  private readonly consumer: ReplacingConsumer;
  /** Next offset per partition, always as SQLite holds it: moved only by what was written there. */
  private readonly positions = new Map<number, bigint>();
  private ends?: Map<number, bigint>;
  /** The periodic end read in flight, if any. */
  private refreshing?: Promise<void>;
  /** The oldest end read not reached yet: reaching it means every record committed before `readAt` is held. */
  private syncTarget?: { ends: Map<number, bigint>; readAt: number };
  private caughtUp = false;
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly deps: ReplicaFollowerDeps) {
    for (const [partition, offset] of deps.replica.offsets()) this.positions.set(partition, BigInt(offset));
    this.consumer = new ReplacingConsumer({
      what: 'replica follower',
      stallMs: STALL_MS,
      logger: deps.logger,
      onReplacing: (reason) => deps.metrics.consumerReplacements.inc({ consumer: 'replica', reason }),
      create: () => this.createConsumer(),
      run: (consumer) => this.run(consumer),
    });
  }

  /** True once the replica has reached the changelog end (seen after start) on every partition. */
  get caughtUpOnce(): boolean {
    return this.caughtUp;
  }

  async start(): Promise<void> {
    const { topic, replica, logger } = this.deps;
    await this.refreshEnds().catch((err: unknown) => logger.warn({ err }, 'reading the changelog end offsets failed'));
    const retention = await deleteRetentionMs(this.deps.admin, topic).catch((err: unknown) => {
      logger.warn({ err }, 'reading delete.retention.ms of the changelog failed; assuming the broker default');
      return DEFAULT_DELETE_RETENTION_MS;
    });
    if (replica.rebuiltFrom !== null) {
      logger.warn(
        { from: replica.rebuiltFrom },
        'the replica was written in an older format; its rows were dropped and it is rebuilt from the changelog',
      );
    }
    this.wipeIfAhead();
    this.wipeIfStale(retention);
    await this.consumer.start();
    this.timers.push(
      setInterval(() => {
        // One periodic read at a time (a slow broker must not pile them up), awaited by stop().
        this.refreshing ??= this.refreshEnds()
          .catch((err: unknown) => logger.debug({ err }, 'refreshing the changelog end offsets failed'))
          .finally(() => (this.refreshing = undefined));
      }, this.deps.endsRefreshMs ?? 1_000),
      setInterval(() => {
        try {
          replica.checkpointWal('PASSIVE');
        } catch (err) {
          logger.warn({ err }, 'replica WAL checkpoint failed');
        }
      }, this.deps.checkpointMs ?? 5_000),
    );
    for (const t of this.timers) t.unref();
  }

  /**
   * The changelog consumer, watched: one kafkajs gave up on or one that hangs is replaced (see
   * watchConsumer). A replacement resumes from the SQLite offsets like any join.
   */
  private createConsumer(): Consumer {
    const { kafka, topic, groupId, replica, logger } = this.deps;
    const consumer = kafka.consumer({
      groupId,
      readUncommitted: false,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 100,
      maxBytesPerPartition: 4 * 1024 * 1024,
      retry: OWNER_REPLACES, // the ReplacingConsumer replaces it; kafkajs must not restart it
    });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      const stored = replica.offsets();
      const assigned = payload.memberAssignment[topic] ?? [];
      for (const partition of assigned) consumer.seek({ topic, partition, offset: stored.get(partition) ?? '0' });
      logger.info(
        { partitions: assigned, from: Object.fromEntries(stored) },
        'replica follower joined; resuming from SQLite offsets',
      );
    });
    // Batches of only transaction markers or aborted records never reach eachBatch; kafkajs reports
    // them here (batchSize 0). A batch with records ends here too when eachBatch skipped it: ignored.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      if (payload.topic !== topic || payload.batchSize !== 0) return;
      const next = BigInt(payload.lastOffset) + 1n;
      if (next > (this.positions.get(payload.partition) ?? 0n)) this.store(payload.partition, [], next);
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      logger.error({ err: payload.error, restart: payload.restart }, 'replica follower crashed');
    });
    return consumer;
  }

  private async run(consumer: Consumer): Promise<void> {
    const { topic, logger, metrics } = this.deps;
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, isRunning, isStale, heartbeat }) => {
        if (!isRunning() || isStale()) return;
        const records: ChangelogRecord[] = [];
        for (const m of batch.messages) {
          try {
            // Only the key is looked at (the message key is the entity key); values are copied
            // as bytes and decoded when a scan reads them.
            records.push({ partition: batch.partition, offset: m.offset, key: decodeKey(m.key), value: m.value });
          } catch (err) {
            if (!isDecodeError(err)) throw err;
            // Only the processor writes the changelog, so this is a bug there; skip it loudly.
            metrics.undecodable.inc({ topic });
            logger.error(
              { err, partition: batch.partition, offset: m.offset },
              'skipping a changelog record with an undecodable key',
            );
          }
        }
        const skipped = this.store(batch.partition, records, BigInt(batch.lastOffset()) + 1n);
        if (skipped > 0) {
          metrics.undecodable.inc({ topic }, skipped);
          logger.error({ partition: batch.partition, skipped }, 'skipped changelog records whose value is not JSON');
        }
        metrics.replicaRecords.inc(records.length);
        await heartbeat();
      },
    });
  }

  async stop(): Promise<void> {
    for (const t of this.timers.splice(0)) clearInterval(t);
    await this.refreshing;
    await this.consumer.stop();
  }

  /** Records per partition between the replica and the last known changelog end. */
  lag(): PartitionLag[] {
    if (this.ends === undefined) return [];
    return [...this.ends]
      .sort(([a], [b]) => a - b)
      .map(([partition, end]) => ({ partition, lag: this.lagOf(partition, end) }));
  }

  /** The changelog's end offsets right now (read_committed: the last stable offsets). */
  async currentEnds(): Promise<Map<number, bigint>> {
    await this.refreshEnds();
    return new Map(this.ends);
  }

  /** Resolves once the replica has reached `target` on every partition; ReplicaBehindError after `timeoutMs`. */
  async waitFor(target: Map<number, bigint>, timeoutMs: number, signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (signal.aborted) throw new AbortedError('aborted');
      const behind = [...target].reduce((sum, [p, end]) => sum + this.lagOf(p, end), 0);
      if (behind === 0) return;
      if (Date.now() >= deadline) throw new ReplicaBehindError(timeoutMs, behind);
      await sleep(50, signal);
    }
  }

  /**
   * The replica only ever holds committed records, so a stored offset past the changelog's end
   * means the topic was recreated: start over from the changelog, the source of truth.
   */
  private wipeIfAhead(): void {
    const ahead = [...(this.ends ?? [])].filter(([p, end]) => (this.positions.get(p) ?? 0n) > end);
    if (ahead.length === 0) return;
    this.deps.logger.warn({ partitions: ahead.map(([p]) => p) }, 'replica is past the changelog end; rebuilding it');
    this.deps.replica.wipe();
    this.positions.clear();
  }

  /**
   * Catching up from stored offsets is only sound while every tombstone written since is still
   * in the changelog: compaction removes them delete.retention.ms after it reaches them. A
   * replica that last matched the end longer ago than that, while records were added since,
   * is rebuilt from the start; otherwise a key deleted meanwhile would stay in it for good.
   */
  private wipeIfStale(deleteRetentionMs: number): void {
    if (this.ends === undefined || this.positions.size === 0) return;
    // Only a commit marker can follow a stored offset without a record in between.
    const moved = [...this.ends].filter(([p, end]) => end - (this.positions.get(p) ?? 0n) > 1n).map(([p]) => p);
    if (moved.length === 0) return;
    const synced = this.deps.replica.syncedAt();
    const age = synced === null ? null : Date.now() - synced;
    if (age !== null && age <= deleteRetentionMs) return;
    this.deps.logger.warn(
      { partitions: moved, syncedAgoMs: age, deleteRetentionMs },
      'replica last matched the changelog longer ago than delete.retention.ms; rebuilding it so no compacted tombstone is missed',
    );
    this.deps.replica.wipe();
    this.positions.clear();
  }

  private lagOf(partition: number, end: bigint): number {
    const position = this.positions.get(partition) ?? 0n;
    return end > position ? Number(end - position) : 0;
  }

  /**
   * Writes a fetched batch's records and its end (`next`: last offset + 1, markers included) in
   * one SQLite transaction, then moves the position to what SQLite now holds.
   */
  private store(partition: number, records: ChangelogRecord[], next: bigint): number {
    const skipped = this.deps.replica.apply(records, { partition, next: next.toString() });
    this.positions.set(partition, next);
    this.noteReached();
    return skipped;
  }

  private async refreshEnds(): Promise<void> {
    const readAt = Date.now();
    this.ends = await endOffsets(this.deps.admin, this.deps.topic);
    this.syncTarget ??= { ends: this.ends, readAt };
    this.noteReached();
  }

  /**
   * Once the replica holds everything up to an end read at `readAt` (the last stable offsets), it
   * held every record committed before then: caught up, and synced at `readAt` (see wipeIfStale).
   * Compared with an end read earlier, not the latest: under steady load the latest is never met.
   */
  private noteReached(): void {
    const target = this.syncTarget;
    if (target === undefined || this.consumer.current === undefined) return;
    if (![...target.ends].every(([p, end]) => this.lagOf(p, end) === 0)) return;
    this.syncTarget = undefined;
    try {
      this.deps.replica.markSynced(target.readAt);
    } catch (err) {
      this.deps.logger.warn({ err }, 'recording the replica sync time failed');
    }
    if (!this.caughtUp) {
      this.caughtUp = true;
      this.deps.logger.info({ partitions: target.ends.size }, 'replica caught up with the changelog');
    }
  }
}
