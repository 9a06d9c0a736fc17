import { AssignerProtocol, ConfigResourceTypes, type Admin } from 'kafkajs';
import { tasksOf } from './assigner';
import { kafkaErrorType } from './kafkajs/error-shapes';

/** What the group coordinator says about one member's claim on a task right now. */
export type TaskOwnership = 'owner' | 'not-owner' | 'rebalancing';

/**
 * Asks the coordinator whether `memberId` holds `task` in the group's current, stable
 * generation. Used before a task whose producer was fenced (or whose commit failed) takes
 * its transactional id again: a member the group evicted (a thawed zombie) must not fence the
 * task's real owner; a member that still owns it (its transaction expired) must re-enter.
 */
export async function taskOwnership(
  admin: Pick<Admin, 'describeGroups'>,
  groupId: string,
  memberId: string,
  task: number,
): Promise<TaskOwnership> {
  const { groups } = await admin.describeGroups([groupId]);
  const group = groups.find((g) => g.groupId === groupId);
  if (!group || group.state !== 'Stable') return group && settledEmpty(group.state) ? 'not-owner' : 'rebalancing';
  const member = group.members.find((m) => m.memberId === memberId);
  if (!member) return 'not-owner';
  const decoded = AssignerProtocol.MemberAssignment.decode(member.memberAssignment);
  return decoded && tasksOf(decoded.assignment).includes(task) ? 'owner' : 'not-owner';
}

/**
 * A group with no members that is not rebalancing: Empty, or Dead, the state DescribeGroups
 * gives a group the coordinator does not have. Kafka 4's group coordinator (KIP-848's, the
 * default there) deletes a classic group once its last member has left (seen on 4.4.0 with no
 * offsets committed), where 3.x keeps it Empty until offsets.retention.minutes.
 */
export function settledEmpty(state: string): boolean {
  return state === 'Empty' || state === 'Dead';
}

/**
 * Whether the coordinator counts `memberId` as a member of `groupId` now: 'absent' only from a
 * settled group (Stable, or Empty / Dead once every member was evicted), 'unknown' while it
 * rebalances.
 */
export async function groupMembership(
  admin: Pick<Admin, 'describeGroups'>,
  groupId: string,
  memberId: string,
): Promise<'member' | 'absent' | 'unknown'> {
  const { groups } = await admin.describeGroups([groupId]);
  const group = groups.find((g) => g.groupId === groupId);
  if (!group || (group.state !== 'Stable' && !settledEmpty(group.state))) return 'unknown';
  return group.members.some((m) => m.memberId === memberId) ? 'member' : 'absent';
}

export interface CommittedOffsetsOptions {
  /**
   * OffsetFetch with require_stable (KIP-447; the kafkajs patch): while a pending transaction may
   * still change a partition's offsets the broker answers UNSTABLE_OFFSET_COMMIT, retried here
   * every `unstableRetryMs` for at most `unstableWithinMs` (a transaction's timeout bounds it).
   */
  requireStable?: boolean;
  unstableWithinMs?: number;
  /**
   * Only these partitions of each topic (a task's own): with `requireStable`, another member's
   * transaction on other partitions must not hold the read up. Default: every partition.
   */
  partitions?: readonly number[];
  unstableRetryMs?: number;
}

/**
 * The group's committed offset of each partition of each topic; a partition without one gets
 * the topic's earliest offset (the processor reads its inputs from the beginning).
 */
export async function committedOffsets(
  admin: Pick<Admin, 'fetchOffsets' | 'fetchTopicOffsets'>,
  groupId: string,
  topics: string[],
  options: CommittedOffsetsOptions = {},
): Promise<Map<string, Map<number, string>>> {
  const { requireStable = false, unstableWithinMs = 120_000, unstableRetryMs = 100, partitions } = options;
  const asked = partitions ? topics.map((topic) => ({ topic, partitions: [...partitions] })) : topics;
  const until = Date.now() + unstableWithinMs;
  let committed: Awaited<ReturnType<Admin['fetchOffsets']>>;
  for (;;) {
    try {
      committed = await admin.fetchOffsets({ groupId, topics: asked, requireStable });
      break;
    } catch (err) {
      if (kafkaErrorType(err) !== 'UNSTABLE_OFFSET_COMMIT' || Date.now() >= until) throw err;
      await new Promise((resolve) => setTimeout(resolve, unstableRetryMs));
    }
  }
  const result = new Map<string, Map<number, string>>();
  for (const { topic, partitions } of committed) {
    const low = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, o.low]));
    result.set(
      topic,
      new Map(partitions.map((p) => [p.partition, p.offset === '-1' ? (low.get(p.partition) ?? '0') : p.offset])),
    );
  }
  return result;
}

/** The broker's default delete.retention.ms (24 h), used when the topic does not report one. */
export const DEFAULT_DELETE_RETENTION_MS = 86_400_000;

/**
 * How long the topic keeps a tombstone after compaction reached it. A local copy of a
 * compacted topic that last matched the topic's end longer ago than this may hold keys whose
 * tombstones are gone: it must be rebuilt from the topic, never caught up from its offset.
 */
export async function deleteRetentionMs(admin: Pick<Admin, 'describeConfigs'>, topic: string): Promise<number> {
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['delete.retention.ms'] }],
  });
  const value = resources[0]?.configEntries.find((e) => e.configName === 'delete.retention.ms')?.configValue;
  const ms = Number(value);
  return Number.isFinite(ms) && ms > 0 ? ms : DEFAULT_DELETE_RETENTION_MS;
}
