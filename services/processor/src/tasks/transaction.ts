import { encodeInputPositions, INPUT_POSITIONS_HEADER } from '@state-relay/contracts';
import { isFencedError, MAX_REQUEST_BYTES, slicesOf, withDeadline } from '@state-relay/kafka-runtime';
import type { Message, Producer, RecordMetadata, Transaction } from 'kafkajs';
import { unitChanges, type UnitOfWork } from './unit-of-work';
import { TaskFailure } from './errors';

export interface TransactionTopics {
  changelog: string;
  results: string;
  deadLetter: string;
}

export interface CommittedUnit {
  /** The changes the unit carried, as the changelog got them (null: tombstone), in the order they go to SQLite. */
  changes: Array<[string, Buffer | null]>;
  /** The changelog offset after the unit's last record, if it wrote any. */
  checkpoint: string | null;
}

/**
 * How long one transaction may take, from begin to commit, before the task gives up on it: longer
 * than one request timeout (30 s), short of kafkajs's retries on a dead connection (see
 * DECISIONS.md, 'A transaction gets 40 s').
 */
export const COMMIT_DEADLINE_MS = 40_000;

/**
 * Throws unless a sendBatch's reply names every partition its slice went to (a message's own
 * partition; for keyed messages, which the partitioner places, at least one partition of the
 * topic). kafkajs 2.2.4 reported success for a send that skipped a partition whose leader had moved
 * (kafkajs#1303; patches/kafkajs@2.2.4.patch re-plans per partition now): a transaction must be
 * aborted, not committed without those records.
 */
export function assertEveryPartitionAnswered(
  slice: ReadonlyArray<{ topic: string; messages: readonly Message[] }>,
  reply: readonly RecordMetadata[],
): void {
  const answered = new Set(reply.map((m) => `${m.topicName}:${m.partition}`));
  const answeredTopics = new Set(reply.map((m) => m.topicName));
  const missing: string[] = [];
  for (const { topic, messages } of slice) {
    const partitions = new Set<number>();
    let keyed = false;
    for (const m of messages) {
      if (typeof m.partition === 'number') partitions.add(m.partition);
      else keyed = true;
    }
    for (const partition of partitions) {
      if (!answered.has(`${topic}:${partition}`)) missing.push(`${topic}-${partition}`);
    }
    if (keyed && !answeredTopics.has(topic)) missing.push(`${topic} (keyed records)`);
  }
  if (missing.length > 0) {
    throw new Error(`sendBatch reported success without an answer for ${missing.join(', ')}: records may be missing`);
  }
}

/** One task's share of a transaction: its unit and where its inputs stand once it commits. */
export interface CommitPart {
  task: number;
  unit: UnitOfWork;
  /** Every input's next offset once this unit commits: each changelog record carries them (restore learns them). */
  inputs: ReadonlyMap<string, bigint>;
  /** The input offsets sendOffsets commits for the task (default: those the unit moved). */
  offsets?: ReadonlyMap<string, bigint>;
  /** Exactly-once v2: who built the part (see PartOwner); the instance committer sends no part without one. */
  owner?: PartOwner;
}

/**
 * The task incarnation behind a part. A part is sent only under a membership its incarnation
 * still holds the task in: a rebalance that moved the task, a rejoin (new member id, skipped
 * generation) or a failure ends the incarnation, so `holds()` turns false and stays false.
 * While it is true the incarnation has held the task through every generation since the part
 * was built (TaskLifecycle.onAssignment fails it otherwise), so the part may go out under the
 * current generation.
 */
export interface PartOwner {
  /** The member the part was handed over under (undefined: before the first join). */
  builtUnder: GroupMembership | undefined;
  /** The incarnation is RUNNING (or flushing on a graceful stop) and the task is in the current assignment. */
  holds(): boolean;
}

/** The consumer group member a transaction's offsets are committed for (exactly-once v2: fenced by the generation). */
export interface GroupMembership {
  generationId: number;
  memberId: string;
}

export interface CommitOptions {
  groupId: string;
  topics: TransactionTopics;
  deadlineMs?: number;
  /**
   * Sent with the offsets (TxnOffsetCommit v3): a member the group no longer counts cannot commit.
   * A function is called right before the offsets go (it may throw to abort the transaction).
   */
  membership?: GroupMembership | (() => GroupMembership);
}

/**
 * One Kafka transaction for a unit of work: its changes to the changelog (last value per key,
 * tombstone on delete, on the task's own partition), the command results, the dead letters and
 * the next offset of each input topic (sendOffsets). Nothing is visible unless it all commits.
 * Throws TaskFailure: `fenced` when another producer owns the id, `commit` otherwise (the
 * outcome may be unknown: the caller must re-fence before it trusts Kafka again).
 */
export async function commitUnit(
  producer: Pick<Producer, 'transaction'>,
  unit: UnitOfWork,
  {
    task,
    inputs = unit.offsets,
    ...options
  }: CommitOptions & {
    task: number;
    /** See CommitPart.inputs. */
    inputs?: ReadonlyMap<string, bigint>;
  },
): Promise<CommittedUnit> {
  const [committed] = await commitUnits(producer, [{ task, unit, inputs }], options);
  return committed!;
}

/**
 * One Kafka transaction for the units of several tasks (exactly-once v2: every task of the
 * instance per commit interval), as commitUnit does for one; resolves each part's CommittedUnit in
 * order. Throws TaskFailure as commitUnit does; `cause` holds the broker's answer.
 */
export async function commitUnits(
  producer: Pick<Producer, 'transaction'>,
  parts: readonly CommitPart[],
  { groupId, topics, deadlineMs = COMMIT_DEADLINE_MS, membership }: CommitOptions,
): Promise<CommittedUnit[]> {
  // Encoded once per key (unitChanges): the same bytes go to the changelog and, after the commit, to SQLite.
  const prepared = parts.map(({ task, unit, inputs }) => {
    const headers = inputs.size > 0 ? { [INPUT_POSITIONS_HEADER]: encodeInputPositions(inputs) } : undefined;
    const changes = unitChanges(unit);
    const changelog: Message[] = changes.map(([key, value]) => ({
      key,
      value,
      partition: task,
      ...(headers && { headers }),
    }));
    return { task, changes, changelog, checkpoint: null as string | null };
  });
  const changelog = prepared.flatMap((p) => p.changelog);
  const results = parts.flatMap((p) => p.unit.results);
  const deadLetters = parts.flatMap((p) => p.unit.deadLetters);
  const topicMessages = [
    ...(changelog.length ? [{ topic: topics.changelog, messages: changelog }] : []),
    ...(results.length ? [{ topic: topics.results, messages: results }] : []),
    ...(deadLetters.length ? [{ topic: topics.deadLetter, messages: deadLetters }] : []),
  ];
  const offsetTopics = new Map<string, Array<{ partition: number; offset: string }>>();
  for (const { task, unit, offsets = unit.offsets } of parts) {
    for (const [topic, next] of offsets) {
      let partitions = offsetTopics.get(topic);
      if (!partitions) offsetTopics.set(topic, (partitions = []));
      partitions.push({ partition: task, offset: next.toString() });
    }
  }
  const byTask = new Map(prepared.map((p) => [p.task, p]));
  let tx: Transaction | undefined;
  const endsAt = performance.now() + deadlineMs;
  let late = false;
  const run = async () => {
    tx = await producer.transaction();
    // kafkajs does not split a request into record batches the broker accepts
    // (max.message.bytes, 1 MB by default): send a big unit's records in slices.
    for (const slice of slicesOf(topicMessages, MAX_REQUEST_BYTES)) {
      const sent = await tx.sendBatch({ topicMessages: slice });
      assertEveryPartitionAnswered(slice, sent);
      const counts = new Map<number, number>();
      for (const m of slice.find((t) => t.topic === topics.changelog)?.messages ?? []) {
        counts.set(m.partition!, (counts.get(m.partition!) ?? 0) + 1);
      }
      for (const meta of sent) {
        const part = meta.topicName === topics.changelog ? byTask.get(meta.partition) : undefined;
        const count = counts.get(meta.partition);
        if (part && count && meta.baseOffset !== undefined) {
          part.checkpoint = (BigInt(meta.baseOffset) + BigInt(count)).toString();
        }
      }
    }
    if (offsetTopics.size > 0) {
      await tx.sendOffsets({
        consumerGroupId: groupId,
        topics: [...offsetTopics].map(([topic, partitions]) => ({ topic, partitions })),
        ...(typeof membership === 'function' ? membership() : membership),
      });
    }
    await tx.commit();
  };
  const who = parts.length === 1 ? `task ${parts[0]!.task}` : `tasks ${parts.map((p) => p.task).join(', ')}`;
  try {
    // Given up on at the deadline, the transaction settles when its producer goes.
    await withDeadline(run(), deadlineMs, {
      error: () => {
        late = true;
        return new Error(`no answer within ${deadlineMs} ms`);
      },
    });
  } catch (err) {
    // Past the deadline the transaction is left to the next fence; an abort after an early failure
    // gets only what is left of the deadline, so the task never stays RUNNING past it.
    if (!late && tx) {
      await withDeadline(
        tx.abort().catch(() => undefined),
        endsAt - performance.now(),
        { fallback: undefined },
      );
    }
    if (err instanceof TaskFailure) throw err; // a part no longer held (see CommitOptions.membership)
    throw new TaskFailure(isFencedError(err) ? 'fenced' : 'commit', `${who}: transaction failed`, err);
  }
  return prepared.map(({ changes, checkpoint }) => ({ changes, checkpoint }));
}
