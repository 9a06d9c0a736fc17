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

/** What DescribeGroups says of the members carrying one instance id. */
export interface InstanceIdClaims {
  /** Stable or settled empty. While the group rebalances its members are listed without their metadata. */
  settled: boolean;
  memberIds: string[];
  /** The members carrying the id (only known when `settled`). */
  holders: InstanceIdHolder[];
}

/** Which members of `groupId` carry `instanceId` now, and which members the group lists. */
export async function instanceIdClaims(
  admin: Pick<Admin, 'describeGroups'>,
  groupId: string,
  instanceId: string,
): Promise<InstanceIdClaims> {
  const { groups } = await admin.describeGroups([groupId]);
  const group = groups.find((g) => g.groupId === groupId);
  if (!group || settledEmpty(group.state)) return { settled: true, memberIds: [], holders: [] };
  const memberIds = group.members.map((m) => m.memberId);
  if (group.state !== 'Stable') return { settled: false, memberIds, holders: [] };
  const holders: InstanceIdHolder[] = [];
  for (const m of group.members) {
    const identity = memberIdentityOf(m.memberMetadata);
    if (identity?.instanceId === instanceId) {
      holders.push({ memberId: m.memberId, clientId: m.clientId, clientHost: m.clientHost, identity });
    }
  }
  return { settled: true, memberIds, holders };
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
