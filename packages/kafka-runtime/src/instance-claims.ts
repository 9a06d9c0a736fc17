import type { Admin } from 'kafkajs';
import { duplicateRefusalOf, memberIdentityOf, type DuplicateRefusal, type MemberIdentity } from './member-identity';
import { settledEmpty } from './ownership';

/** A live-looking member of the group that carries an instance id, as DescribeGroups shows it. */
export interface InstanceIdHolder {
  memberId: string;
  clientId: string;
  /** The address the coordinator sees the member connect from. */
  clientHost: string;
  identity: MemberIdentity;
}

/**
 * Which members of `groupId` carry `instanceId` now: 'rebalancing' while the group is neither
 * Stable nor settled empty (only a Stable group's description holds the members' metadata).
 */
export async function instanceIdHolders(
  admin: Pick<Admin, 'describeGroups'>,
  groupId: string,
  instanceId: string,
): Promise<InstanceIdHolder[] | 'rebalancing'> {
  const { groups } = await admin.describeGroups([groupId]);
  const group = groups.find((g) => g.groupId === groupId);
  if (!group || settledEmpty(group.state)) return [];
  if (group.state !== 'Stable') return 'rebalancing';
  const holders: InstanceIdHolder[] = [];
  for (const m of group.members) {
    const identity = memberIdentityOf(m.memberMetadata);
    if (identity?.instanceId === instanceId) {
      holders.push({ memberId: m.memberId, clientId: m.clientId, clientHost: m.clientHost, identity });
    }
  }
  return holders;
}

/**
 * The refusal the group's leader put in `memberId`'s assignment (it carries an instance id
 * another member keeps), or undefined: none, or the group is not Stable (asked again next join).
 */
export async function duplicateRefusalFor(
  admin: Pick<Admin, 'describeGroups'>,
  groupId: string,
  memberId: string,
): Promise<DuplicateRefusal | undefined> {
  const { groups } = await admin.describeGroups([groupId]);
  const group = groups.find((g) => g.groupId === groupId);
  if (group?.state !== 'Stable') return undefined;
  return duplicateRefusalOf(group.members.find((m) => m.memberId === memberId)?.memberAssignment);
}
