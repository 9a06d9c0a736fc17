import { AssignerProtocol } from 'kafkajs';
import { groupMembership, taskOwnership } from '../src';

// What DescribeGroups answers, as the ownership checks read it.
function admin(state: string, members: { memberId: string; tasks: number[] }[] = []) {
  return {
    describeGroups: async (ids: string[]) => ({
      groups: [
        {
          groupId: ids[0]!,
          state,
          protocolType: 'consumer',
          protocol: '',
          errorCode: 0,
          members: members.map((m) => ({
            memberId: m.memberId,
            clientId: 'c',
            clientHost: 'h',
            memberMetadata: Buffer.alloc(0),
            memberAssignment: AssignerProtocol.MemberAssignment.encode({
              version: 1,
              assignment: { t: m.tasks },
              userData: Buffer.alloc(0),
            }),
          })),
        },
      ],
    }),
  };
}

describe('group ownership checks', () => {
  it('read Dead (Kafka 4 deletes an empty classic group without offsets) as Empty: nobody owns', async () => {
    for (const state of ['Empty', 'Dead']) {
      await expect(taskOwnership(admin(state), 'g', 'm', 0)).resolves.toBe('not-owner');
      await expect(groupMembership(admin(state), 'g', 'm')).resolves.toBe('absent');
    }
  });

  it('stay undecided while the group rebalances', async () => {
    for (const state of ['PreparingRebalance', 'CompletingRebalance']) {
      await expect(taskOwnership(admin(state), 'g', 'm', 0)).resolves.toBe('rebalancing');
      await expect(groupMembership(admin(state), 'g', 'm')).resolves.toBe('unknown');
    }
  });

  it('find the owner in a stable group', async () => {
    const a = admin('Stable', [{ memberId: 'm', tasks: [0, 2] }]);
    await expect(taskOwnership(a, 'g', 'm', 2)).resolves.toBe('owner');
    await expect(taskOwnership(a, 'g', 'm', 1)).resolves.toBe('not-owner');
    await expect(groupMembership(a, 'g', 'other')).resolves.toBe('absent');
  });
});
