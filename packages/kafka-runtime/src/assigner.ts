import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';
import {
  duplicateMembers,
  encodeDuplicateRefusal,
  encodeMemberData,
  memberIdentityOf,
  memberTasksOf,
  type DuplicateRefusal,
  type MemberIdentity,
  type MemberTasks,
} from './member-identity';
import { stickyAssignment } from './sticky-assignment';

export interface CoPartitionedAssignerOptions {
  /** This member's identity, published in its member metadata; none: empty user data (unknown). */
  identity?: MemberIdentity;
  /** Called on the leader for each member given nothing because another member keeps its instance id. */
  onDuplicate?: (memberId: string, refusal: DuplicateRefusal) => void;
  /**
   * What this member holds when it joins (asked at every join): published so that the leader keeps
   * tasks where they are and gives a task back to a member with its store (see stickyAssignment).
   */
  holding?: () => MemberTasks;
}

/**
 * Assigns partition p of every subscribed topic to the same member, so one instance owns
 * task p (events-p and commands-p) whole. kafkajs's built-in round robin would split them.
 * Which member gets a task: see stickyAssignment (a task stays with its owner, a returning
 * instance gets back the tasks it has stores for, balanced to ±1, members ordered by instance id;
 * on a fresh group task p goes to member p mod n). A member carrying an instance id another
 * member keeps (see duplicateMembers) gets no task, and a refusal in its assignment's user data;
 * the others share the tasks as if it were absent.
 */
export function coPartitionedAssigner(options: CoPartitionedAssignerOptions = {}): PartitionAssigner {
  const { identity, onDuplicate, holding } = options;
  return ({ cluster }) => ({
    name: 'CoPartitioned',
    version: 1,
    async assign({ members, topics }) {
      const read = members.map((m) => ({
        memberId: m.memberId,
        identity: memberIdentityOf(m.memberMetadata),
        tasks: memberTasksOf(m.memberMetadata),
      }));
      const duplicates = duplicateMembers(read);
      const partitionsOf = new Map(
        topics.map((topic) => [topic, cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId)]),
      );
      const owners = stickyAssignment(
        read
          .filter((m) => !duplicates.has(m.memberId))
          .map((m) => ({
            memberId: m.memberId,
            ...(m.identity && { instanceId: m.identity.instanceId }),
            owned: m.tasks.owned,
            stores: m.tasks.stores,
          })),
        [...partitionsOf.values()].flat(),
      );
      const ownerOf = new Map<number, string>();
      for (const [memberId, tasks] of owners) for (const t of tasks) ownerOf.set(t, memberId);
      const memberIds = members.map((m) => m.memberId).sort();
      const assignment = new Map<string, Record<string, number[]>>(memberIds.map((id) => [id, {}]));
      for (const [topic, partitions] of partitionsOf) {
        for (const partition of [...partitions].sort((a, b) => a - b)) {
          const owner = ownerOf.get(partition);
          if (owner === undefined) continue;
          (assignment.get(owner)![topic] ??= []).push(partition);
        }
      }
      for (const [memberId, refusal] of duplicates) onDuplicate?.(memberId, refusal);
      return memberIds.map((memberId) => {
        const refusal = duplicates.get(memberId);
        return {
          memberId,
          memberAssignment: AssignerProtocol.MemberAssignment.encode({
            version: 1,
            assignment: assignment.get(memberId)!,
            userData: refusal ? encodeDuplicateRefusal(refusal) : Buffer.alloc(0),
          }),
        };
      });
    },
    protocol({ topics }) {
      const held = holding?.() ?? { owned: [], stores: [] };
      const userData =
        identity || held.owned.length > 0 || held.stores.length > 0
          ? encodeMemberData(identity, held)
          : Buffer.alloc(0);
      return {
        name: 'CoPartitioned',
        metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData }),
      };
    },
  });
}

/** The co-partitioned assigner of a member that publishes no identity. */
export const CoPartitionedAssigner: PartitionAssigner = coPartitionedAssigner();

/** The tasks (partition numbers) a kafkajs GROUP_JOIN memberAssignment gives this member. */
export function tasksOf(memberAssignment: Record<string, number[]>): number[] {
  const tasks = new Set<number>();
  for (const partitions of Object.values(memberAssignment)) for (const p of partitions) tasks.add(p);
  return [...tasks].sort((a, b) => a - b);
}
