/** One group member as the sticky assignment sees it (the leader reads it from the member's user data). */
export interface AssignmentMember {
  memberId: string;
  /** The member's INSTANCE_ID when it publishes one: what orders members, stable across restarts. */
  instanceId?: string;
  /** The tasks the member owned in the generation before (empty for a member that just started). */
  owned: readonly number[];
  /**
   * The member's store files on disk (owned, or kept after a revoke or a restart): each task with
   * the changelog offset its store reflects (its checkpoint; -1 when unknown or empty).
   */
  stores: readonly StoreHeld[];
}

/** A task's store file on a member: [task, the changelog offset it reflects (-1: unknown)]. */
export type StoreHeld = readonly [task: number, offset: number];

/**
 * Tasks to members, balanced to ±1, moving as few tasks and as little state as it can:
 *
 * 1. Members are ordered by instance id (member id when they have none, and to break ties): a
 *    restarted instance joins with a new member id but keeps its place.
 * 2. A task stays with the member that owned it while that member is in the group and under its
 *    share (⌊tasks/members⌋, one more for the first `tasks mod members` members to ask). A member
 *    over its share gives up first the tasks another member can take over most cheaply: the
 *    smallest gap between its own store's offset and the best other store's.
 * 3. A task nobody keeps goes to the member (under its share) whose store of it is the most up to
 *    date, so a returning instance gets back the tasks it left and restores only the changelog's tail.
 * 4. The rest go to the least loaded member; ties go to member `task mod members` of the order,
 *    then the order: on a fresh group that is exactly `task mod members`.
 *
 * Deterministic: the same members and tasks give the same assignment, whatever their input order.
 * A task claimed by two members (a stale claim after a missed generation) counts for the first in
 * the order.
 */
export function stickyAssignment(
  members: readonly AssignmentMember[],
  tasks: readonly number[],
): Map<string, number[]> {
  const order = [...members].sort(byPlace);
  const result = new Map<string, number[]>(order.map((m) => [m.memberId, []]));
  if (order.length === 0) return result;
  const all = [...new Set(tasks)].sort((a, b) => a - b);
  const base = Math.floor(all.length / order.length);
  let longer = all.length % order.length; // shares of base + 1 still to give out
  const load = new Map<string, number>(order.map((m) => [m.memberId, 0]));
  const taken = new Set<number>();
  const fits = (memberId: string): boolean => {
    const n = load.get(memberId)!;
    return n < base || (n === base && longer > 0);
  };
  const give = (memberId: string, task: number): void => {
    const n = load.get(memberId)!;
    if (n === base) longer--;
    load.set(memberId, n + 1);
    result.get(memberId)!.push(task);
    taken.add(task);
  };

  const wanted = new Set(all);
  const offsets = new Map(order.map((m) => [m.memberId, new Map(m.stores.map(([t, o]) => [t, o]))]));
  /** The most up-to-date store of `task` among members other than `except` (-1: none has one, or unknown). */
  const bestOther = (task: number, except: string): number => {
    let best = -1;
    for (const [memberId, held] of offsets) if (memberId !== except) best = Math.max(best, held.get(task) ?? -1);
    return best;
  };
  const claimed = new Set<number>();
  const claims = new Map<string, number[]>();
  for (const m of order) {
    const own: number[] = [];
    for (const t of new Set(m.owned)) {
      if (!wanted.has(t) || claimed.has(t)) continue;
      claimed.add(t);
      own.push(t);
    }
    // Kept first: the tasks whose move would cost the longest restore elsewhere.
    const held = offsets.get(m.memberId)!;
    const cost = (t: number) => Math.max(0, (held.get(t) ?? 0) - bestOther(t, m.memberId));
    own.sort((a, b) => cost(b) - cost(a) || a - b);
    claims.set(m.memberId, own);
  }
  // 2. Owners keep their tasks up to the base share, then (in order) one more while longer shares last.
  for (const m of order) for (const t of claims.get(m.memberId)!.slice(0, base)) give(m.memberId, t);
  for (const m of order) {
    const next = claims.get(m.memberId)![base];
    if (next !== undefined && fits(m.memberId)) give(m.memberId, next);
  }
  // 3. A task nobody kept, to the member with its most up-to-date store.
  for (const t of all) {
    if (taken.has(t)) continue;
    let holder: AssignmentMember | undefined;
    let best = -Infinity;
    for (const m of order) {
      const offset = offsets.get(m.memberId)!.get(t);
      if (offset !== undefined && offset > best && fits(m.memberId)) [holder, best] = [m, offset];
    }
    if (holder) give(holder.memberId, t);
  }
  // 4. The rest, to the least loaded.
  for (const t of all) {
    if (taken.has(t)) continue;
    const preferred = order[t % order.length]!;
    let best = preferred;
    for (const m of order) if (load.get(m.memberId)! < load.get(best.memberId)!) best = m;
    give(best.memberId, t);
  }
  for (const list of result.values()) list.sort((a, b) => a - b);
  return result;
}

function byPlace(a: AssignmentMember, b: AssignmentMember): number {
  const ka = a.instanceId ?? a.memberId;
  const kb = b.instanceId ?? b.memberId;
  if (ka !== kb) return ka < kb ? -1 : 1;
  return a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0;
}
