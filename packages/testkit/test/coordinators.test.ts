import { busiestLeader, partitionFor } from '../src/coordinators';

describe('busiestLeader', () => {
  it('names the node leading the most partitions', () => {
    expect(busiestLeader([2, 3, 2, 1, 2, 3])).toBe(2);
  });

  it('takes the lowest id among nodes leading as many, and skips leaderless partitions', () => {
    expect(busiestLeader([3, 1, -1, 3, 1, -1, -1])).toBe(1);
  });

  it('spares the node it is asked to among nodes leading as many, but not a busier one', () => {
    expect(busiestLeader([1, 2, 3, 1, 2, 3], 1)).toBe(2);
    expect(busiestLeader([1, 1, 2, 3], 1)).toBe(1);
  });

  it('refuses a topic with no leader at all', () => {
    expect(() => busiestLeader([-1, -1])).toThrow('no partition has a leader');
  });
});

describe('partitionFor', () => {
  it("maps a key as Kafka's Utils.abs(String.hashCode()) % partitions does", () => {
    // "a".hashCode() = 97; "polygenelubricants".hashCode() = Integer.MIN_VALUE, which abs maps to 0.
    expect(partitionFor('a', 4)).toBe(1);
    expect(partitionFor('polygenelubricants', 7)).toBe(0);
  });
});
