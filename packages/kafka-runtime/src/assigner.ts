import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';
import {
  duplicateMembers,
  encodeDuplicateRefusal,
  encodeMemberIdentity,
  memberIdentityOf,
  type DuplicateRefusal,
  type MemberIdentity,
} from './member-identity';

export interface CoPartitionedAssignerOptions {
  /** This member's identity, published in its member metadata; none: empty user data (unknown). */
  identity?: MemberIdentity;
  /** Called on the leader for each member given nothing because another member keeps its instance id. */
  onDuplicate?: (memberId: string, refusal: DuplicateRefusal) => void;
}

/**
 * Assigns partition p of every subscribed topic to the same member, so one instance owns
 * task p (events-p and commands-p) whole. kafkajs's built-in round robin would split them.
 * Tasks go to members in order (task % members), members sorted by id for determinism.
 * A member carrying an instance id another member keeps (see duplicateMembers) gets no task,
 * and a refusal in its assignment's user data; the others share the tasks as if it were absent.
 */
export function coPartitionedAssigner(options: CoPartitionedAssignerOptions = {}): PartitionAssigner {
  const { identity, onDuplicate } = options;
  const userData = identity ? encodeMemberIdentity(identity) : Buffer.alloc(0);
  return ({ cluster }) => ({
    name: 'CoPartitioned',
    version: 1,
    async assign({ members, topics }) {
      const duplicates = duplicateMembers(
        members.map((m) => ({ memberId: m.memberId, identity: memberIdentityOf(m.memberMetadata) })),
      );
      const memberIds = members.map((m) => m.memberId).sort();
      const owners = memberIds.filter((id) => !duplicates.has(id));
      const assignment = new Map<string, Record<string, number[]>>(memberIds.map((id) => [id, {}]));
      for (const topic of topics) {
        const partitions = cluster
          .findTopicPartitionMetadata(topic)
          .map((p) => p.partitionId)
          .sort((a, b) => a - b);
        for (const partition of partitions) {
          const owner = owners[partition % owners.length];
          if (owner === undefined) continue;
          const own = assignment.get(owner)!;
          (own[topic] ??= []).push(partition);
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
