import { stickyAssignment, type AssignmentMember } from '../src/sticky-assignment';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** `stores`: tasks (their stores at offset 100) or task → offset. */
const m = (
  memberId: string,
  instanceId?: string,
  owned: number[] = [],
  stores: number[] | Record<number, number> = [],
): AssignmentMember => ({
  memberId,
  ...(instanceId !== undefined && { instanceId }),
  owned,
  stores: Array.isArray(stores)
    ? stores.map((t) => [t, 100] as const)
    : Object.entries(stores).map(([t, o]) => [Number(t), o] as const),
});
const byInstance = (result: Map<string, number[]>, members: AssignmentMember[]) =>
  Object.fromEntries(members.map((x) => [x.instanceId ?? x.memberId, result.get(x.memberId)]));

/** A small seeded generator, so a failing case can be replayed from its seed. */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

describe('stickyAssignment', () => {
  it('on a fresh group gives task p to member p mod n, members ordered by instance id', () => {
    const members = [m('x-9', 'b'), m('x-1', 'c'), m('x-5', 'a')];
    expect(byInstance(stickyAssignment(members, range(7)), members)).toEqual({
      a: [0, 3, 6],
      b: [1, 4],
      c: [2, 5],
    });
  });

  it('orders members without an instance id by member id', () => {
    const members = [m('m-b'), m('m-a')];
    expect(byInstance(stickyAssignment(members, range(4)), members)).toEqual({ 'm-a': [0, 2], 'm-b': [1, 3] });
  });

  it('keeps every task with its owner while the assignment is balanced, whatever the order says', () => {
    const members = [m('x-1', 'a', [1, 3, 5]), m('x-2', 'b', [0, 2, 4])];
    expect(byInstance(stickyAssignment(members, range(6)), members)).toEqual({ a: [1, 3, 5], b: [0, 2, 4] });
  });

  it('gives a restarted instance (new member id, no tasks owned) back the tasks it has the freshest stores for', () => {
    // processor-1 restarted: processor-2 took its tasks meanwhile and restored them. processor-1
    // still has its stores of 0, 2 and 4 a little behind, and older ones of 1, 3 and 5 from an
    // earlier assignment: processor-2 gives back the tasks it can hand over most cheaply.
    const members = [
      m('p1-new', 'processor-1', [], { 0: 95, 1: 10, 2: 95, 3: 10, 4: 95, 5: 10 }),
      m('p2', 'processor-2', [0, 1, 2, 3, 4, 5], { 0: 100, 1: 100, 2: 100, 3: 100, 4: 100, 5: 100 }),
    ];
    expect(byInstance(stickyAssignment(members, range(6)), members)).toEqual({
      'processor-1': [0, 2, 4],
      'processor-2': [1, 3, 5],
    });
  });

  it('moves only what balance needs when a member joins, and a joiner with stores gets those', () => {
    const members = [m('a', 'a', [0, 1, 2, 3, 4, 5]), m('b', 'b', [], [4, 5])];
    const got = stickyAssignment(members, range(6));
    expect(byInstance(got, members)).toEqual({ a: [0, 1, 2], b: [3, 4, 5] });
    const three = [m('a', 'a', [0, 1, 2]), m('b', 'b', [3, 4, 5]), m('c', 'c')];
    const after = byInstance(stickyAssignment(three, range(6)), three);
    expect(after).toEqual({ a: [0, 1], b: [3, 4], c: [2, 5] });
  });

  it('gives a task nobody keeps to the member with its most up-to-date store', () => {
    const members = [m('a', 'a', [], { 0: 5, 1: 50 }), m('b', 'b', [], { 0: 40, 1: 7 })];
    expect(byInstance(stickyAssignment(members, range(2)), members)).toEqual({ a: [1], b: [0] });
  });

  it('hands a departed member’s tasks to the others, keeping theirs', () => {
    const members = [m('a', 'a', [0, 3]), m('c', 'c', [2, 5])];
    expect(byInstance(stickyAssignment(members, range(6)), members)).toEqual({ a: [0, 3, 4], c: [1, 2, 5] });
  });

  it('counts a task two members claim for the first in the order, and ignores tasks that do not exist', () => {
    const members = [m('a', 'a', [0, 1, 9]), m('b', 'b', [1, 2])];
    expect(byInstance(stickyAssignment(members, range(4)), members)).toEqual({ a: [0, 1], b: [2, 3] });
  });

  it('gives nothing to members beyond the number of tasks, keeping owners first', () => {
    const members = [m('a', 'a'), m('b', 'b', [1]), m('c', 'c')];
    expect(byInstance(stickyAssignment(members, range(2)), members)).toEqual({ a: [0], b: [1], c: [] });
    expect(stickyAssignment([], range(3))).toEqual(new Map());
  });

  it('property: every task exactly once, balanced to ±1, owners keep up to their share, independent of input order', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const rnd = random(seed);
      const tasks = range(1 + Math.floor(rnd() * 24));
      const n = 1 + Math.floor(rnd() * 6);
      const pick = () => tasks.filter(() => rnd() < 0.3);
      const members = range(n).map((i) =>
        m(`member-${Math.floor(rnd() * 1e6)}-${i}`, rnd() < 0.8 ? `inst-${i}` : undefined, pick(), pick()),
      );
      const got = stickyAssignment(members, tasks);
      const context = `seed ${seed}`;
      const all = [...got.values()].flat().sort((a, b) => a - b);
      expect({ context, all }).toEqual({ context, all: tasks });
      const loads = [...got.values()].map((l) => l.length);
      expect({ context, spread: Math.max(...loads) - Math.min(...loads) <= 1 }).toEqual({ context, spread: true });
      const shuffled = [...members].sort(() => rnd() - 0.5);
      expect({ context, same: stickyAssignment(shuffled, tasks) }).toEqual({ context, same: got });
      // A member that claimed at least its base share and was the first claimant keeps that many of its claims.
      const base = Math.floor(tasks.length / n);
      const claimedBy = new Map<number, string>();
      const ordered = [...members].sort((a, b) =>
        (a.instanceId ?? a.memberId) < (b.instanceId ?? b.memberId) ? -1 : 1,
      );
      for (const x of ordered) for (const t of x.owned) if (!claimedBy.has(t)) claimedBy.set(t, x.memberId);
      for (const x of members) {
        const mine = [...claimedBy].filter(([, id]) => id === x.memberId).map(([t]) => t);
        const kept = got.get(x.memberId)!.filter((t) => mine.includes(t)).length;
        expect({ context, member: x.memberId, kept: kept >= Math.min(base, mine.length) }).toEqual({
          context,
          member: x.memberId,
          kept: true,
        });
      }
    }
  });
});
