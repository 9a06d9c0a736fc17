import { longestCommitGaps, type TaskCommit } from '../../src/report/commit-gaps';

const at = (task: number, ...times: number[]): TaskCommit[] => times.map((committedAt) => ({ task, committedAt }));

describe('longestCommitGaps', () => {
  it('gives each task its own longest gap between consecutive commits inside the window', () => {
    const commits = [...at(0, 100, 200, 900, 1000), ...at(1, 150, 250, 350, 450, 1100)];
    expect(longestCommitGaps(commits, [0, 1], 0, 1200)).toEqual([
      { task: 0, ms: 700, from: 200, to: 900, open: false },
      { task: 1, ms: 650, from: 450, to: 1100, open: false },
    ]);
  });

  it('counts a gap that straddles an edge of the window whole, and ignores gaps outside it', () => {
    // 0 -> 5000 lies before the window; 5100 -> 5900 and 5900 -> 8000 overlap it.
    const commits = at(0, 0, 5000, 5100, 5900, 8000);
    expect(longestCommitGaps(commits, [0], 5500, 6000)).toEqual([
      { task: 0, ms: 2100, from: 5900, to: 8000, open: false },
    ]);
  });

  it('cuts a gap still open at the end of the window there, and says so', () => {
    expect(longestCommitGaps(at(0, 100, 200), [0], 150, 1000)).toEqual([
      { task: 0, ms: 800, from: 200, to: 1000, open: true },
    ]);
  });

  it('gives a task that never committed the whole window, open', () => {
    expect(longestCommitGaps(at(1, 100), [0], 0, 500)).toEqual([{ task: 0, ms: 500, from: 0, to: 500, open: true }]);
  });

  it('does not depend on the order the commits come in', () => {
    const commits = at(0, 300, 100, 1000, 200);
    expect(longestCommitGaps(commits, [0], 0, 2000)).toEqual(longestCommitGaps([...commits].reverse(), [0], 0, 2000));
    expect(longestCommitGaps(commits, [0], 0, 2000)[0]).toMatchObject({ ms: 1000, from: 1000, to: 2000, open: true });
  });
});
