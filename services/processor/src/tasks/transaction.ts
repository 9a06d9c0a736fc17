import { encodeInputPositions, encodeStoredEntity, INPUT_POSITIONS_HEADER } from '@state-relay/contracts';
import { isFencedError, MAX_REQUEST_BYTES, slicesOf, withDeadline } from '@state-relay/kafka-runtime';
import type { Message, Producer, Transaction } from 'kafkajs';
import type { UnitOfWork } from './unit-of-work';
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
    groupId,
    topics,
    deadlineMs = COMMIT_DEADLINE_MS,
    inputs = unit.offsets,
  }: {
    task: number;
    groupId: string;
    topics: TransactionTopics;
    deadlineMs?: number;
    /** Every input's next offset once this unit commits: each changelog record carries them (restore learns them). */
    inputs?: ReadonlyMap<string, bigint>;
  },
): Promise<CommittedUnit> {
  const headers = inputs.size > 0 ? { [INPUT_POSITIONS_HEADER]: encodeInputPositions(inputs) } : undefined;
  // Encoded once, at fold: the same bytes go to the changelog and, after the commit, to SQLite.
  const changes: Array<[string, Buffer | null]> = [];
  const changelog: Message[] = [];
  for (const [key, entity] of unit.cache.entries()) {
    const value = entity ? (unit.encoded.get(key) ?? encodeStoredEntity(entity)) : null;
    changes.push([key, value]);
    changelog.push({ key, value, partition: task, ...(headers && { headers }) });
  }
  const topicMessages = [
    ...(changelog.length ? [{ topic: topics.changelog, messages: changelog }] : []),
    ...(unit.results.length ? [{ topic: topics.results, messages: unit.results }] : []),
    ...(unit.deadLetters.length ? [{ topic: topics.deadLetter, messages: unit.deadLetters }] : []),
  ];
  let checkpoint: string | null = null;
  let tx: Transaction | undefined;
  const endsAt = performance.now() + deadlineMs;
  let late = false;
  const run = async () => {
    tx = await producer.transaction();
    // kafkajs does not split a request into record batches the broker accepts
    // (max.message.bytes, 1 MB by default): send a big unit's records in slices.
    for (const slice of slicesOf(topicMessages, MAX_REQUEST_BYTES)) {
      const sent = await tx.sendBatch({ topicMessages: slice });
      const meta = sent.find((r) => r.topicName === topics.changelog && r.partition === task);
      const count = slice.find((t) => t.topic === topics.changelog)?.messages.length ?? 0;
      if (meta?.baseOffset !== undefined) checkpoint = (BigInt(meta.baseOffset) + BigInt(count)).toString();
    }
    if (unit.offsets.size > 0) {
      await tx.sendOffsets({
        consumerGroupId: groupId,
        topics: [...unit.offsets].map(([topic, next]) => ({
          topic,
          partitions: [{ partition: task, offset: next.toString() }],
        })),
      });
    }
    await tx.commit();
  };
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
    throw new TaskFailure(isFencedError(err) ? 'fenced' : 'commit', `task ${task}: transaction failed`, err);
  }
  return { changes, checkpoint };
}
