import { COMMAND_OUTCOMES } from '@state-relay/contracts';
import { ApiError } from '../src/cli/errors';
import { scanListText, scanText, scheduleListText, scheduleText, table } from '../src/cli/format';
import { Output } from '../src/cli/output';
import { formatSeconds, ProgressReporter, progressLine, summary } from '../src/cli/progress';
import { apiErrorText } from '../src/cli/run';
import { interruptedNote } from '../src/cli/scan-commands';
import type { ScanView } from '../src/scans/scan-view';
import type { ScheduleView } from '../src/schedules/schedule-service';

const results = Object.fromEntries(COMMAND_OUTCOMES.map((o) => [o, 0])) as ScanView['counts']['results'];
const view: ScanView = {
  id: 's1',
  url: '/scans/s1',
  status: 'running',
  phase: 'walking',
  condition: { field: 'status', op: 'eq', value: 'active' },
  action: { delete: true },
  options: { rate: 5 },
  asOf: '2026-11-01T00:00:00.000Z',
  counts: {
    scanned: 500,
    matched: 150,
    emitted: 150,
    pending: 20,
    results: { ...results, applied: 120, condition_false: 10 },
  },
  progress: { replicaRows: 1000, fraction: 0.5, etaSeconds: 75, eta: null },
  pace: null,
  backoffSeconds: 0,
  replicaLag: { total: 0, partitions: [] },
  createdAt: '2026-11-01T00:00:01.000Z',
  startedAt: '2026-11-01T00:00:02.000Z',
  finishedAt: null,
  error: null,
};

const schedule: ScheduleView = {
  id: 'sch-1',
  url: '/schedules/sch-1',
  name: 'nightly',
  cron: '0 3 * * *',
  timeZone: 'Europe/Berlin',
  paused: false,
  template: { condition: { field: 'a', op: 'exists' }, action: { delete: true } },
  createdAt: '2026-11-01T00:00:00.000Z',
  lastRunAt: '2026-11-02T02:00:00.000Z',
  nextRunAt: '2026-11-03T02:00:00.000Z',
  lastRuns: [
    {
      scanId: 'scan-9',
      dueAt: '2026-11-02T02:00:00.000Z',
      startedAt: '2026-11-02T02:00:00.400Z',
      missed: 2,
      status: 'completed',
      counts: { ...view.counts, pending: 0 },
    },
  ],
};

describe('CLI output: progress while following', () => {
  it('draws the walk as a bar with the counts and the ETA', () => {
    expect(progressLine(view, 10)).toBe(
      '[#####-----]  50% running:walking scanned 500/1000 matched 150 emitted 150 awaiting 20 eta 1m15s',
    );
  });

  it('shows the paced rate and what limits it while the scan emits, and the budget in `scans get`', () => {
    const pace = { rate: 812.4, limiter: 'budget' as const, budgetP99Ms: 138, baselineP99Ms: 115, eventP99Ms: 131 };
    expect(progressLine({ ...view, pace }, 10)).toBe(
      '[#####-----]  50% running:walking scanned 500/1000 matched 150 emitted 150 awaiting 20 rate 812/s (budget) eta 1m15s',
    );
    expect(scanText({ ...view, pace })).toContain(
      '  pace      rate 812/s (budget), event p99 131 ms, budget 138 ms, baseline 115 ms',
    );
    const ramp = { rate: 12.5, limiter: 'ramp' as const, budgetP99Ms: null, baselineP99Ms: null, eventP99Ms: null };
    expect(scanText({ ...view, pace: ramp })).toContain(
      '  pace      rate 12.5/s (ramp), event p99 -, no budget, baseline -',
    );
    expect(scanText(view)).not.toContain('pace');
  });

  it('ends with every outcome count', () => {
    const text = summary({ ...view, status: 'completed', phase: null });
    expect(text).toContain('scan s1 completed');
    expect(text).toMatch(/applied\s+120/);
    expect(text).toMatch(/condition_false\s+10/);
    expect(text).toMatch(/version_conflict\s+0/);
  });

  it('without a terminal: one line per update, at most one per interval, and always the final one', () => {
    let now = 0;
    const written: string[] = [];
    const progress = new ProgressReporter({ write: (t) => void written.push(t), isTTY: false }, 2_000, () => now);
    for (const [at, scanned] of [
      [0, 100],
      [500, 200],
      [1_900, 300],
      [2_000, 400],
      [3_000, 500],
    ] as const) {
      now = at;
      progress.update({ ...view, counts: { ...view.counts, scanned } });
    }
    now = 3_100;
    progress.update({ ...view, status: 'completed', phase: null, counts: { ...view.counts, scanned: 1000 } });
    progress.end();
    expect(written.map((t) => t.match(/scanned (\d+)/)![1])).toEqual(['100', '400', '1000']);
    for (const t of written) expect(t).toMatch(/^[^\r\x1b\n]+\n$/);
  });

  it('on a terminal: the line is redrawn in place and ended once', () => {
    const written: string[] = [];
    const progress = new ProgressReporter({ write: (t) => void written.push(t), isTTY: true, columns: 40 });
    progress.update(view);
    progress.update(view);
    progress.end();
    expect(written).toHaveLength(3);
    expect(written[0]).toMatch(/^\r\x1b\[2K\[/);
    expect(written[0]!.length).toBeLessThanOrEqual('\r\x1b[2K'.length + 39);
    expect(written[2]).toBe('\n');
  });

  it('formats durations', () => {
    expect(formatSeconds(4.2)).toBe('5s');
    expect(formatSeconds(3_700)).toBe('1h01m');
  });

  it('after Ctrl-C: says the scan goes on, and the commands that cancel or follow it (with a --url that is not the default)', () => {
    expect(interruptedNote(view, 'http://127.0.0.1:8081')).toBe(
      [
        'stopped following; scan s1 goes on (running).',
        '  cancel it:        state-relay scans cancel s1',
        '  follow it again:  state-relay scans follow s1',
      ].join('\n'),
    );
    expect(interruptedNote(view, 'http://scanner:9')).toContain('state-relay scans cancel s1 --url http://scanner:9');
  });
});

describe('CLI output: lists and details', () => {
  it('a table pads each column to its widest cell', () => {
    expect(
      table(
        ['A', 'BB', 'C'],
        [
          ['aaa', 'b', 'c'],
          ['a', 'bbbb', ''],
        ],
      ),
    ).toBe('A    BB    C\naaa  b     c\na    bbbb');
  });

  it('scans list: one row per scan and where the page is', () => {
    const text = scanListText({
      scans: [view, { ...view, id: 's0', status: 'completed', phase: null, options: { dryRun: true } }],
      total: 5,
      limit: 2,
      offset: 0,
    });
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+CREATED\s+SCANNED\s+MATCHED\s+EMITTED\s+PENDING$/);
    expect(lines[1]).toMatch(/^s1\s+running:walking\s+2026-11-01T00:00:01.000Z\s+500\s+150\s+150\s+20$/);
    expect(lines[2]).toMatch(/^s0\s+completed\s+.*dry run$/);
    expect(lines[3]).toBe('scans 1-2 of 5, newest first; next page: --offset 2');
    expect(scanListText({ scans: [], total: 0, limit: 20, offset: 0 })).toBe('no scans');
    expect(scanListText({ scans: [], total: 3, limit: 20, offset: 40 })).toBe('no scans at offset 40 (3 in all)');
  });

  it('scans get: status, times, rule, options and every outcome count', () => {
    const text = scanText(view);
    expect(text.split('\n')[0]).toBe('scan s1 running (walking)');
    expect(text).toContain('created 2026-11-01T00:00:01.000Z, started 2026-11-01T00:00:02.000Z, finished -');
    expect(text).toContain('condition {"field":"status","op":"eq","value":"active"}');
    expect(text).toContain('options   {"rate":5}');
    for (const outcome of COMMAND_OUTCOMES) expect(text).toMatch(new RegExp(`^  ${outcome}\\s+\\d+$`, 'm'));
    expect(scanText({ ...view, status: 'failed', phase: null, error: 'replica_behind' }).split('\n')[0]).toBe(
      'scan s1 failed: replica_behind',
    );
  });

  it('schedules list and get', () => {
    const list = scheduleListText([
      schedule,
      {
        ...schedule,
        id: 'sch-2',
        interval: 'PT1H',
        cron: undefined,
        timeZone: 'UTC',
        paused: true,
        nextRunAt: null,
        lastRunAt: null,
      },
    ]).split('\n');
    expect(list[0]).toMatch(/^ID\s+NAME\s+WHEN\s+STATE\s+NEXT RUN\s+LAST RUN$/);
    expect(list[1]).toMatch(
      /^sch-1\s+nightly\s+cron 0 3 \* \* \* \(Europe\/Berlin\)\s+active\s+2026-11-03T02:00:00.000Z\s+2026-11-02T02:00:00.000Z$/,
    );
    expect(list[2]).toMatch(/^sch-2\s+nightly\s+every PT1H \(UTC\)\s+paused\s+-\s+-$/);
    expect(scheduleListText([])).toBe('no schedules');
    const detail = scheduleText(schedule);
    expect(detail).toContain('schedule sch-1 "nightly" active');
    expect(detail).toContain('template  {"condition":{"field":"a","op":"exists"},"action":{"delete":true}}');
    expect(detail).toContain(
      '2026-11-02T02:00:00.000Z  scan scan-9 completed, matched 150, emitted 150, 2 missed due times folded in',
    );
    expect(scheduleText({ ...schedule, paused: true, nextRunAt: null, lastRuns: [] })).toMatch(
      /next run  - \(paused\)[\s\S]*no runs yet/,
    );
  });

  it("an API error: its status, code and message, and each field's issue", () => {
    const err = new ApiError(400, 'invalid_request', '/body/name: too short', [
      { path: '/body/name', message: 'too short' },
    ]);
    expect(apiErrorText(err)).toBe('400 invalid_request: /body/name: too short\n  /body/name: too short');
    expect(apiErrorText(new ApiError(null, 'unreachable', 'cannot reach the scanner at http://x (ECONNREFUSED)'))).toBe(
      'cannot reach the scanner at http://x (ECONNREFUSED)',
    );
  });
});

describe('CLI output: --json', () => {
  const sink = () => {
    const chunks: string[] = [];
    return { chunks, stream: { write: (t: string) => void chunks.push(t) } };
  };

  it('with --json: the result alone on stdout, as one JSON document; notes and errors on stderr', () => {
    const out = sink();
    const err = sink();
    const output = new Output(true, out.stream, err.stream);
    output.note('scan s1 created');
    output.result(view, 'a text nobody sees');
    output.error('boom');
    expect(JSON.parse(out.chunks.join(''))).toEqual(view);
    expect(err.chunks.join('')).toBe('scan s1 created\nstate-relay: boom\n');
    expect(output.progressStream).toBe(err.stream);
  });

  it('without: text and notes on stdout, errors on stderr', () => {
    const out = sink();
    const err = sink();
    const output = new Output(false, out.stream, err.stream);
    output.note('scan s1 created');
    output.result(view, 'the text');
    output.result(view, undefined);
    output.error('boom');
    expect(out.chunks.join('')).toBe('scan s1 created\nthe text\n');
    expect(err.chunks.join('')).toBe('state-relay: boom\n');
    expect(output.progressStream).toBe(out.stream);
  });
});
