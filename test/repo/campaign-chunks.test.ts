import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CampaignOptions, RunRecord } from '../faults/campaign';
import { campaignMarkdown, resumeMismatches, runList, runsToDo, type CampaignChunk } from '../faults/campaign-report';
import { writeJson, type RunMeta } from '../faults/report';

// A campaign longer than a working session goes in chunks (`pnpm faults --resume --chunk N`):
// which runs a chunk does, which options it must share with the file, what the docs say.

const OPTIONS: CampaignOptions = {
  runs: 50,
  seed: 1000,
  keys: 2000,
  rate: 'auto',
  loadPerSecond: 200,
  faultsPerRun: [2, 5],
  exactlyOnce: 'v2',
  brokers: 3,
};

function record(run: number, passed = true): RunRecord {
  return {
    run,
    seed: OPTIONS.seed + run,
    schedule: ['rebalance'],
    faults: [{ fault: 'rebalance', atEmitted: 1, scanStatus: 'running', faultMs: 1_000, recoveryMs: 2_000 }],
    events: 100,
    commands: 10,
    lost: 0,
    doubled: 0,
    stuck: 0,
    matched: 10,
    rate: 7,
    passed,
    ms: 60_000,
    replay: `pnpm faults --runs 1 --seed ${OPTIONS.seed + run}`,
  };
}

function meta(commit: string, command: string, startedAt: string, finishedAt?: string): RunMeta {
  return {
    commit,
    uncommitted: [],
    startedAt,
    ...(finishedAt === undefined ? {} : { finishedAt }),
    command,
    machine: { cpus: 2, memoryGiB: 24, node: 'v20', runtime: 'podman' },
  };
}

describe('a campaign in chunks', () => {
  it('does the runs the file lacks, in order, at most a chunk of them', () => {
    expect(runsToDo(5, [])).toEqual([0, 1, 2, 3, 4]);
    expect(runsToDo(5, [record(0), record(2)])).toEqual([1, 3, 4]);
    expect(runsToDo(5, [record(0), record(2)], 2)).toEqual([1, 3]);
    expect(runsToDo(3, [record(0), record(1), record(2)], 10)).toEqual([]);
  });

  it('resumes only the campaign it was started as, naming each option that differs', () => {
    expect(resumeMismatches(OPTIONS, { ...OPTIONS })).toEqual([]);
    expect(resumeMismatches(OPTIONS, { ...OPTIONS, seed: 7, brokers: 1 })).toEqual([
      '--seed: the file has 1000, this command 7',
      '--brokers: the file has 3, this command 1',
    ]);
    expect(resumeMismatches(OPTIONS, { ...OPTIONS, faultsPerRun: [1, 5] })).toEqual([
      '--faults: the file has [2,5], this command [1,5]',
    ]);
    // A file written before an option existed has no value for it: that is a difference too.
    const { exactlyOnce: _dropped, ...older } = OPTIONS;
    expect(resumeMismatches(older, OPTIONS)).toEqual(['--exactly-once: the file has null, this command "v2"']);
  });

  it('writes run numbers 1-based, as ranges', () => {
    expect(runList([0, 1, 2, 5, 7, 8])).toBe('1–3, 6, 8–9');
    expect(runList([4])).toBe('5');
    expect(runList([])).toBe('');
  });

  it("gives each chunk's command and commit in the docs, and says how many runs are still to do", () => {
    const first: CampaignChunk = {
      ...meta(
        'a'.repeat(40),
        'pnpm faults --brokers 3 --runs 50 --seed 1000 --chunk 2',
        '2026-12-07T01:00:00Z',
        '2026-12-07T01:30:00Z',
      ),
      runs: [0, 1],
    };
    const second: CampaignChunk = {
      ...meta(
        'b'.repeat(40),
        'pnpm faults --brokers 3 --runs 50 --seed 1000 --resume',
        '2026-12-08T01:00:00Z',
        '2026-12-08T01:20:00Z',
      ),
      runs: [2],
    };
    const md = campaignMarkdown([record(0), record(1), record(2)], OPTIONS, first, 1, false, [first, second]);
    expect(md).toContain('Made in 2 chunks');
    expect(md).toContain(
      'runs 1–2 by `pnpm faults --brokers 3 --runs 50 --seed 1000 --chunk 2` on commit `aaaaaaaaaaaa`',
    );
    expect(md).toContain('runs 3 by `pnpm faults --brokers 3 --runs 50 --seed 1000 --resume` on commit `bbbbbbbbbbbb`');
    expect(md).toContain('**3 of 50 runs so far**');
    expect(md).not.toContain('Cut short');
    // One chunk, killed before its end: cut short, as before chunks existed.
    const killed: CampaignChunk = {
      ...meta('c'.repeat(40), 'pnpm faults --runs 50', '2026-12-07T01:00:00Z'),
      runs: [0],
    };
    const cut = campaignMarkdown([record(0)], OPTIONS, killed, 1, false, [killed]);
    expect(cut).toContain('**Cut short after 1 of 50 runs**');
    expect(cut).toContain('Made by `pnpm faults --runs 50` on commit `cccccccccccc`');
  });

  it('refuses --resume with --no-docs before starting anything', () => {
    const cli = path.join(__dirname, '..', 'faults', 'cli.js');
    const run = spawnSync(process.execPath, [cli, 'faults', '--resume', '--no-docs'], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--resume adds to the campaign file, which --no-docs does not write');
    const chunk = spawnSync(process.execPath, [cli, 'faults', '--chunk', '0'], { encoding: 'utf8' });
    expect(chunk.status).toBe(2);
    expect(chunk.stderr).toContain('--chunk must be a positive integer, got 0');
  });

  it('writes its file as the format check wants it (the campaign JSON is in docs/)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'campaign-json-'));
    try {
      const file = path.join(dir, 'campaign.json');
      await writeJson(file, { options: { faultsPerRun: [2, 5] }, runs: [] });
      // JSON.stringify(…, 2) puts each array element on its own line; prettier keeps short arrays on one.
      expect(readFileSync(file, 'utf8')).toBe('{\n  "options": {\n    "faultsPerRun": [2, 5]\n  },\n  "runs": []\n}\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
