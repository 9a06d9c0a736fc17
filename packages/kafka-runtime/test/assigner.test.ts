import { AssignerProtocol, type Cluster, type GroupMember } from 'kafkajs';
import { coPartitionedAssigner, CoPartitionedAssigner, tasksOf } from '../src/assigner';
import {
  decodeDuplicateRefusal,
  decodeMemberIdentity,
  decodeMemberTasks,
  encodeMemberData,
  encodeMemberIdentity,
  type MemberIdentity,
  type MemberTasks,
} from '../src/member-identity';

const TOPICS = ['events', 'commands'];
const cluster = (partitions: number) =>
  ({
    findTopicPartitionMetadata: () =>
      Array.from({ length: partitions }, (_, i) => ({ partitionId: partitions - 1 - i })),
  }) as unknown as Cluster;

const identity = (instanceId: string, startedAt: number): MemberIdentity => ({
  instanceId,
  startedAt,
  host: `host-of-${instanceId}`,
  sessionTimeoutMs: 10_000,
});
const member = (memberId: string, who?: MemberIdentity): GroupMember => ({
  memberId,
  memberMetadata: AssignerProtocol.MemberMetadata.encode({
    version: 1,
    topics: TOPICS,
    userData: who ? encodeMemberIdentity(who) : Buffer.alloc(0),
  }),
});

async function assign(members: GroupMember[], partitions = 4, onDuplicate = jest.fn()) {
  const assigner = coPartitionedAssigner({ onDuplicate })({
    cluster: cluster(partitions),
    groupId: 'g',
    logger: {} as never,
  });
  const result = await assigner.assign({ members, topics: TOPICS });
  return new Map(
    result.map(({ memberId, memberAssignment }) => {
      const decoded = AssignerProtocol.MemberAssignment.decode(memberAssignment)!;
      return [
        memberId,
        { tasks: tasksOf(decoded.assignment), assignment: decoded.assignment, userData: decoded.userData },
      ];
    }),
  );
}

describe('the co-partitioned assigner', () => {
  it('gives partition p of every topic to one member, task % members over members sorted by id', async () => {
    const got = await assign([member('m-b'), member('m-a')], 4);
    expect(got.get('m-a')!.tasks).toEqual([0, 2]);
    expect(got.get('m-b')!.tasks).toEqual([1, 3]);
    for (const { assignment } of got.values()) expect(assignment.events).toEqual(assignment.commands);
  });

  it('balances members that carry distinct instance ids exactly as members without one', async () => {
    const plain = await assign([member('m-1'), member('m-2'), member('m-3')], 7);
    const identified = await assign(
      [member('m-1', identity('a', 1)), member('m-2', identity('b', 2)), member('m-3')],
      7,
    );
    expect([...identified].map(([id, a]) => [id, a.tasks])).toEqual([...plain].map(([id, a]) => [id, a.tasks]));
  });

  it('gives a member whose instance id another member keeps no task, and a refusal naming the keeper', async () => {
    const onDuplicate = jest.fn();
    const got = await assign(
      [member('m-1', identity('x', 200)), member('m-2', identity('x', 100)), member('m-3', identity('y', 300))],
      4,
      onDuplicate,
    );
    expect(got.get('m-1')!.tasks).toEqual([]);
    expect(decodeDuplicateRefusal(got.get('m-1')!.userData)).toEqual({
      instanceId: 'x',
      holder: { memberId: 'm-2', host: 'host-of-x', startedAt: 100 },
    });
    // The others share every task as if the duplicate were absent.
    expect(got.get('m-2')!.tasks).toEqual([0, 2]);
    expect(got.get('m-3')!.tasks).toEqual([1, 3]);
    expect(got.get('m-2')!.userData.length).toBe(0);
    expect(onDuplicate).toHaveBeenCalledTimes(1);
    expect(onDuplicate).toHaveBeenCalledWith('m-1', expect.objectContaining({ instanceId: 'x' }));
  });

  it('decides the same whatever order the members come in; a tie of start times goes to the lower member id', async () => {
    const members = [member('m-2', identity('x', 100)), member('m-1', identity('x', 100))];
    const one = await assign(members);
    const other = await assign([...members].reverse());
    expect(one.get('m-1')!.tasks).toEqual([0, 1, 2, 3]);
    expect(one.get('m-2')!.tasks).toEqual([]);
    expect([...other].sort()).toEqual([...one].sort());
  });

  it('publishes its identity in the member metadata user data, and nothing without one', () => {
    const who = identity('x', 1);
    const withIdentity = coPartitionedAssigner({ identity: who })({
      cluster: cluster(1),
      groupId: 'g',
      logger: {} as never,
    });
    const decoded = AssignerProtocol.MemberMetadata.decode(withIdentity.protocol({ topics: TOPICS }).metadata)!;
    expect(decoded.topics).toEqual(TOPICS);
    expect(decodeMemberIdentity(decoded.userData)).toEqual(who);
    expect(decodeMemberTasks(decoded.userData)).toEqual({ owned: [], stores: [] });
    const plain = CoPartitionedAssigner({ cluster: cluster(1), groupId: 'g', logger: {} as never });
    expect(AssignerProtocol.MemberMetadata.decode(plain.protocol({ topics: TOPICS }).metadata)!.userData.length).toBe(
      0,
    );
  });

  it('publishes what the member holds at each join, and the leader keeps tasks with their owners', async () => {
    let held: MemberTasks = { owned: [], stores: [] };
    const assigner = coPartitionedAssigner({ identity: identity('b', 1), holding: () => held })({
      cluster: cluster(4),
      groupId: 'g',
      logger: {} as never,
    });
    const first = AssignerProtocol.MemberMetadata.decode(assigner.protocol({ topics: TOPICS }).metadata)!;
    expect(decodeMemberTasks(first.userData)).toEqual({ owned: [], stores: [] });
    held = {
      owned: [0, 1],
      stores: [
        [0, 5],
        [1, 5],
        [3, -1],
      ],
    };
    const again = AssignerProtocol.MemberMetadata.decode(assigner.protocol({ topics: TOPICS }).metadata)!;
    expect(decodeMemberTasks(again.userData)).toEqual(held);
    expect(decodeMemberIdentity(again.userData)).toEqual(identity('b', 1));

    // Member ids sort the other way round from the owners' tasks: the owners keep them anyway.
    const holder = (memberId: string, who: MemberIdentity, tasks: MemberTasks): GroupMember => ({
      memberId,
      memberMetadata: AssignerProtocol.MemberMetadata.encode({
        version: 1,
        topics: TOPICS,
        userData: encodeMemberData(who, tasks),
      }),
    });
    const got = await assign([
      holder('m-1', identity('a', 1), { owned: [2, 3], stores: [] }),
      holder('m-2', identity('b', 2), { owned: [0, 1], stores: [] }),
    ]);
    expect(got.get('m-1')!.tasks).toEqual([2, 3]);
    expect(got.get('m-2')!.tasks).toEqual([0, 1]);
    for (const { assignment } of got.values()) expect(assignment.events).toEqual(assignment.commands);
  });
});
