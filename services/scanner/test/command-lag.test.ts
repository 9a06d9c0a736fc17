import { CommandLagProbe } from '../src/scans/command-lag';

describe('the processor’s lag on the commands topic', () => {
  let now = 0;
  let reads = 0;
  let committed: Array<{ partition: number; offset: string }>;
  const admin = {
    fetchTopicOffsets: async () => [
      { partition: 0, offset: '100', high: '100', low: '0' },
      { partition: 1, offset: '50', high: '50', low: '10' },
    ],
    fetchOffsets: async () => {
      reads++;
      return [{ topic: 'commands', partitions: committed }];
    },
  };
  const probe = () => new CommandLagProbe({ admin: admin as never, groupId: 'app', topic: 'commands', now: () => now });

  beforeEach(() => {
    now = 0;
    reads = 0;
    committed = [
      { partition: 0, offset: '70' },
      { partition: 1, offset: '-1' },
    ];
  });

  it('is the sum of end minus committed offset, counting a partition without a commit from its start', async () => {
    expect(await probe().lag()).toBe(30 + 40);
  });

  it('reuses a reading briefly, then serves it while a fresh one is read in the background', async () => {
    const p = probe();
    expect(await p.lag()).toBe(70);
    committed = [
      { partition: 0, offset: '100' },
      { partition: 1, offset: '50' },
    ];
    now = 100;
    expect(await p.lag()).toBe(70); // cached
    expect(reads).toBe(1);
    now = 1_000;
    expect(await p.lag()).toBe(70); // stale, refreshing
    await new Promise((r) => setImmediate(r));
    expect(await p.lag()).toBe(0);
    now = 10_000;
    committed = [{ partition: 0, offset: '0' }];
    expect(await p.lag()).toBe(140); // too old to serve: waits for a fresh reading
  });

  it('makes a caller wait at most waitMs for a fresh reading, and keeps the late one for the next caller', async () => {
    let answer: (() => void) | undefined;
    const slow = {
      ...admin,
      fetchOffsets: () =>
        new Promise<Array<{ topic: string; partitions: typeof committed }>>((resolve) => {
          answer = () => resolve([{ topic: 'commands', partitions: committed }]);
        }),
    };
    const p = new CommandLagProbe({
      admin: slow as never,
      groupId: 'app',
      topic: 'commands',
      now: () => now,
      waitMs: 20,
    });
    await expect(p.lag()).rejects.toThrow('no lag reading within 20 ms');
    answer!();
    await new Promise((r) => setImmediate(r));
    expect(await p.lag()).toBe(70); // the late reading, cached
  });
});
