import { escapeText, escapeValue, redactUrl } from '../src/cli/escape';
import { scheduleListText, scheduleText, table } from '../src/cli/format';
import { Output } from '../src/cli/output';
import { ProgressReporter, summary } from '../src/cli/progress';
import { apiErrorText } from '../src/cli/run';
import { ApiError } from '../src/cli/errors';
import type { ScheduleView } from '../src/schedules/schedule-service';
import type { ScanView } from '../src/scans/scan-view';

// Issue 34 item 7: a schedule named "\u001b[1A\u001b[2K…" hid its row from another operator's
// `schedules list`. Every control character the CLI prints for people is made visible.

const HIDE = '\u001b[1A\u001b[2Kinnocent';
const TERMINAL_CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

describe('CLI escaping of terminal controls', () => {
  it('escapeValue makes every control visible, newlines included; escapeText keeps the line breaks', () => {
    expect(escapeValue(HIDE)).toBe('\\u001b[1A\\u001b[2Kinnocent');
    expect(escapeValue('a\nb\rc\td\u009bK\u202ee')).toBe('a\\u000ab\\u000dc\\u0009d\\u009bK\\u202ee');
    expect(escapeText('line 1\nline\u001b 2')).toBe('line 1\nline\\u001b 2');
    expect(escapeValue('plain ünïcode ✓')).toBe('plain ünïcode ✓');
  });

  const schedule = {
    id: 'sch-1',
    url: '/schedules/sch-1',
    name: HIDE,
    interval: 'PT1H',
    timeZone: 'UTC',
    paused: false,
    template: { condition: { field: 'a', op: 'exists' }, action: { delete: true } },
    createdAt: '2026-11-01T00:00:00.000Z',
    lastRunAt: null,
    nextRunAt: '2026-11-01T01:00:00.000Z',
    lastRuns: [],
  } as ScheduleView;

  it('schedules list and get: the hostile row stays visible, with its escapes shown', () => {
    const list = scheduleListText([schedule, { ...schedule, id: 'sch-2', name: 'forged\nsch-9  fake' }]);
    expect(list).not.toMatch(TERMINAL_CONTROLS);
    expect(list.split('\n')).toHaveLength(3); // the header and two rows: a newline forges none
    expect(list).toContain('\\u001b[1A\\u001b[2Kinnocent');
    expect(list).toContain('forged\\u000asch-9  fake');
    expect(scheduleText(schedule)).toContain('schedule sch-1 "\\u001b[1A\\u001b[2Kinnocent" active');
    expect(table(['A'], [['\u0007bell']])).toBe('A\n\\u0007bell');
  });

  it('errors, progress lines and notes: every path to the terminal', () => {
    const err = new ApiError(400, 'invalid_request', `bad\u001b[2J`, [
      { path: '/body/\u001b]0;x\u0007', message: 'm\r' },
    ]);
    err.issuesOmitted = 7;
    expect(apiErrorText(err)).toBe(
      '400 invalid_request: bad\\u001b[2J\n  /body/\\u001b]0;x\\u0007: m\\u000d\n  and 7 more',
    );
    const scan = {
      id: 'scan-1',
      status: 'failed',
      phase: null,
      error: 'boom\u001b[1A',
      counts: { scanned: 0, matched: 0, emitted: 0, pending: 0, results: {} },
      progress: { fraction: 0, replicaRows: null, etaSeconds: null },
      pace: null,
      backoffSeconds: 0,
    } as unknown as ScanView;
    expect(summary(scan)).toMatch(/^scan scan-1 failed: boom\\u001b\[1A/);
    const written: string[] = [];
    new ProgressReporter({ isTTY: true, columns: 200, write: (t) => void written.push(t) }).update({
      ...scan,
      status: 'running\u001b[2K' as ScanView['status'],
    });
    expect(written[0]!.startsWith('\r\x1b[2K')).toBe(true); // the reporter's own redraw
    expect(written[0]!.slice(5)).not.toMatch(TERMINAL_CONTROLS);
    const out: string[] = [];
    const stream = { write: (t: string) => void out.push(t) };
    const output = new Output(false, stream, stream);
    output.note('note \u001b[31m');
    output.result({}, 'result\n\u009b2J');
    output.error('error \u0007');
    expect(out.join('')).toBe('note \\u001b[31m\nresult\n\\u009b2J\nstate-relay: error \\u0007\n');
  });
});

// Issue 34 item 8: the CLI echoed a URL with its credentials.
describe('CLI redaction of URL credentials', () => {
  it.each([
    ['https://user:secret@host', 'https://***@host'],
    ['https://user:secret@host:8081/base?x=1', 'https://***@host:8081/base?x=1'],
    ['http://user:p@ss@host/path@x', 'http://***@host/path@x'],
    ['https://token@host', 'https://***@host'],
    ['https://host/a@b', 'https://host/a@b'],
    ['http://127.0.0.1:8081', 'http://127.0.0.1:8081'],
    [
      'cannot reach the scanner at https://u:pw@h (TypeError: ... https://u:pw@h/scans)',
      'cannot reach the scanner at https://***@h (TypeError: ... https://***@h/scans)',
    ],
  ])('%s → %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  it('takes linear time on hostile text', () => {
    const hostile = `${'A+'.repeat(200_000)}\u0000A://@${' https://u:pw@h'.repeat(50_000)}`;
    const started = Date.now();
    const shown = redactUrl(hostile);
    expect(shown.includes(':pw@')).toBe(false); // not toContain: its failure would print 1 MB
    expect(shown.endsWith(' https://***@h')).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('Output redacts every URL it prints for people', () => {
    const out: string[] = [];
    const stream = { write: (t: string) => void out.push(t) };
    new Output(false, stream, stream).error('cannot reach the scanner at https://admin:hunter2@scanner.example');
    expect(out.join('')).toBe('state-relay: cannot reach the scanner at https://***@scanner.example\n');
  });
});
