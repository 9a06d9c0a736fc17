import { AssignerProtocol, PartitionAssigner } from 'kafkajs';

/**
 * Assigns partition p of every subscribed topic to the same member, so one instance owns
 * task p (events-p and commands-p) whole. kafkajs's built-in round robin would split them.
 * Tasks go to members in order (task % members), members sorted by id for determinism.
 */
export const CoPartitionedAssigner: PartitionAssigner = ({ cluster }) => ({
  name: 'CoPartitioned',
  version: 1,
  async assign({ members, topics }) {
    const memberIds = members.map((m) => m.memberId).sort();
    const assignment = new Map<string, Record<string, number[]>>(memberIds.map((id) => [id, {}]));
    for (const topic of topics) {
      const partitions = cluster
        .findTopicPartitionMetadata(topic)
        .map((p) => p.partitionId)
        .sort((a, b) => a - b);
      for (const partition of partitions) {
        const owner = memberIds[partition % memberIds.length];
        if (owner === undefined) continue;
        const own = assignment.get(owner)!;
        (own[topic] ??= []).push(partition);
      }
    }
    return memberIds.map((memberId) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({
        version: 1,
        assignment: assignment.get(memberId)!,
        userData: Buffer.alloc(0),
      }),
    }));
  },
  protocol({ topics }) {
    return {
      name: 'CoPartitioned',
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }),
    };
  },
});

/** The tasks (partition numbers) a kafkajs GROUP_JOIN memberAssignment gives this member. */
export function tasksOf(memberAssignment: Record<string, number[]>): number[] {
  const tasks = new Set<number>();
  for (const partitions of Object.values(memberAssignment)) for (const p of partitions) tasks.add(p);
  return [...tasks].sort((a, b) => a - b);
}
