import { AssignerProtocol } from 'kafkajs';
import type { StoreHeld } from './sticky-assignment';

/**
 * Who a group member is, published in its member metadata's user data (the assigner's
 * `protocol()`): two live members with one instance id share one transactional id and would
 * fence each other forever (EXACTLY_ONCE=v2).
 */
export interface MemberIdentity {
  instanceId: string;
  /** When the process started (ms since the epoch): of two members with one id, the earlier keeps it. */
  startedAt: number;
  /** The process's host name, for the operator who has to find it. */
  host: string;
  /** The member's session timeout: a member still listed after it has passed is alive. */
  sessionTimeoutMs: number;
}

/** The leader's verdict on a member it gave nothing to, in that member's assignment user data. */
export interface DuplicateRefusal {
  instanceId: string;
  /** The member that keeps the instance id. */
  holder: { memberId: string; host: string; startedAt: number };
}

// A magic and a version before the JSON, so an older or foreign user data (empty, or another
// assigner's bytes) is told apart from ours and reads as unknown.
const IDENTITY_MAGIC = Buffer.from('SRMI');
const REFUSAL_MAGIC = Buffer.from('SRRF');
const FORMAT_VERSION = 1;
const MAX_HOST_LENGTH = 255;

function frame(magic: Buffer, body: object): Buffer {
  return Buffer.concat([magic, Buffer.from([FORMAT_VERSION]), Buffer.from(JSON.stringify(body), 'utf8')]);
}

/** The JSON object after `magic` and a version byte (a newer version may add fields), or undefined. */
function unframe(magic: Buffer, data: Buffer | null | undefined): Record<string, unknown> | undefined {
  if (!data || data.length <= magic.length + 1 || !data.subarray(0, magic.length).equals(magic)) return undefined;
  if (data[magic.length]! < FORMAT_VERSION) return undefined;
  try {
    const body: unknown = JSON.parse(data.subarray(magic.length + 1).toString('utf8'));
    return typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const isText = (v: unknown): v is string => typeof v === 'string';
const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

export function encodeMemberIdentity(identity: MemberIdentity): Buffer {
  return frame(IDENTITY_MAGIC, { ...identity, host: identity.host.slice(0, MAX_HOST_LENGTH) });
}

/**
 * What a member holds, for the leader's sticky assignment (see stickyAssignment): the tasks it
 * owns now and the tasks it has a store file for. Published beside the identity, in the same user
 * data; a member without an identity (EXACTLY_ONCE=v1 without INSTANCE_ID) publishes only this.
 */
export interface MemberTasks {
  owned: readonly number[];
  /** Each store file on disk: [task, the changelog offset it reflects (-1: unknown)]. */
  stores: readonly StoreHeld[];
}

/** More tasks than any topic the processor creates: a longer list is garbled, read as none. */
const MAX_LISTED_TASKS = 100_000;
const NO_TASKS: MemberTasks = { owned: [], stores: [] };

/** The member's user data: its identity (when it has one) and the tasks it holds. */
export function encodeMemberData(identity: MemberIdentity | undefined, tasks: MemberTasks): Buffer {
  const who = identity ? { ...identity, host: identity.host.slice(0, MAX_HOST_LENGTH) } : {};
  return frame(IDENTITY_MAGIC, { ...who, owned: [...tasks.owned], stores: [...tasks.stores] });
}

const isTask = (t: unknown): t is number => Number.isSafeInteger(t) && (t as number) >= 0;
const isTaskList = (v: unknown): v is number[] => Array.isArray(v) && v.length <= MAX_LISTED_TASKS && v.every(isTask);
const isStoreList = (v: unknown): v is StoreHeld[] =>
  Array.isArray(v) &&
  v.length <= MAX_LISTED_TASKS &&
  v.every(
    (s) => Array.isArray(s) && s.length === 2 && isTask(s[0]) && Number.isSafeInteger(s[1]) && (s[1] as number) >= -1,
  );

/** The tasks a member's user data lists; none for older, foreign or garbled bytes. Never throws. */
export function decodeMemberTasks(userData: Buffer | null | undefined): MemberTasks {
  const body = unframe(IDENTITY_MAGIC, userData);
  if (!body) return NO_TASKS;
  return { owned: isTaskList(body.owned) ? body.owned : [], stores: isStoreList(body.stores) ? body.stores : [] };
}

/** The identity in a member's user data; undefined (unknown) for empty, old-format or garbled bytes. Never throws. */
export function decodeMemberIdentity(userData: Buffer | null | undefined): MemberIdentity | undefined {
  const body = unframe(IDENTITY_MAGIC, userData);
  if (!body) return undefined;
  const { instanceId, startedAt, host, sessionTimeoutMs } = body;
  if (!isText(instanceId) || instanceId === '' || !isTime(startedAt) || !isText(host) || !isTime(sessionTimeoutMs)) {
    return undefined;
  }
  return { instanceId, startedAt, host, sessionTimeoutMs };
}

/** The identity in a member's whole metadata (JoinGroup's, or DescribeGroups' `memberMetadata`). Never throws. */
export function memberIdentityOf(memberMetadata: Buffer | null | undefined): MemberIdentity | undefined {
  return decodeMemberIdentity(userDataOf(memberMetadata));
}

/** The tasks a member's whole metadata lists (see MemberTasks). Never throws. */
export function memberTasksOf(memberMetadata: Buffer | null | undefined): MemberTasks {
  return decodeMemberTasks(userDataOf(memberMetadata));
}

function userDataOf(memberMetadata: Buffer | null | undefined): Buffer | undefined {
  if (!memberMetadata || memberMetadata.length === 0) return undefined;
  try {
    return AssignerProtocol.MemberMetadata.decode(memberMetadata)?.userData ?? undefined;
  } catch {
    return undefined; // kafkajs's decoder reads past the end of a short buffer
  }
}

export function encodeDuplicateRefusal(refusal: DuplicateRefusal): Buffer {
  return frame(REFUSAL_MAGIC, refusal);
}

/** The refusal in an assignment's user data, or undefined. Never throws. */
export function decodeDuplicateRefusal(userData: Buffer | null | undefined): DuplicateRefusal | undefined {
  const body = unframe(REFUSAL_MAGIC, userData);
  const holder = body?.holder as Record<string, unknown> | undefined;
  if (!body || !isText(body.instanceId) || typeof holder !== 'object' || holder === null) return undefined;
  const { memberId, host, startedAt } = holder;
  if (!isText(memberId) || !isText(host) || !isTime(startedAt)) return undefined;
  return { instanceId: body.instanceId, holder: { memberId, host, startedAt } };
}

/** The refusal in a whole assignment (DescribeGroups' `memberAssignment`), or undefined. Never throws. */
export function duplicateRefusalOf(memberAssignment: Buffer | null | undefined): DuplicateRefusal | undefined {
  if (!memberAssignment || memberAssignment.length === 0) return undefined;
  try {
    return decodeDuplicateRefusal(AssignerProtocol.MemberAssignment.decode(memberAssignment)?.userData);
  } catch {
    return undefined;
  }
}

export interface IdentifiedMember {
  memberId: string;
  identity: MemberIdentity | undefined;
}

/**
 * The members that must hold no tasks, each with the member that keeps its instance id: of the
 * members carrying one instance id, the earliest start keeps it (a tie: the lowest member id).
 * Members of unknown identity are never duplicates.
 */
export function duplicateMembers(members: readonly IdentifiedMember[]): Map<string, DuplicateRefusal> {
  const byInstance = new Map<string, Array<{ memberId: string; identity: MemberIdentity }>>();
  for (const { memberId, identity } of members) {
    if (!identity) continue;
    const list = byInstance.get(identity.instanceId) ?? [];
    list.push({ memberId, identity });
    byInstance.set(identity.instanceId, list);
  }
  const duplicates = new Map<string, DuplicateRefusal>();
  for (const [instanceId, list] of byInstance) {
    if (list.length < 2) continue;
    list.sort(
      (a, b) =>
        a.identity.startedAt - b.identity.startedAt || (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0),
    );
    const [keeper, ...rest] = list;
    const holder = { memberId: keeper!.memberId, host: keeper!.identity.host, startedAt: keeper!.identity.startedAt };
    for (const { memberId } of rest) duplicates.set(memberId, { instanceId, holder });
  }
  return duplicates;
}
