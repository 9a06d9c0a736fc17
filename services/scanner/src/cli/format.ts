// How scans and schedules read on a terminal (without --json). Pure: text in, text out.
import type { ScanView } from '../scans/scan-view';
import type { ScheduleView } from '../schedules/schedule-service';
import type { ScanList } from './client';
import { paceDetail, summary } from './progress';
import { escapeValue } from './escape';

/** Columns padded to their widest cell, two blanks apart; the last column is not padded. */
export function table(headers: string[], cells: string[][]): string {
  // Cells come from the server: a newline or an escape sequence in one must not forge or hide a row.
  const rows = cells.map((r) => r.map(escapeValue));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

const state = (scan: Pick<ScanView, 'status' | 'phase'>) => (scan.phase ? `${scan.status}:${scan.phase}` : scan.status);

export function scanListText(list: ScanList): string {
  if (list.scans.length === 0) {
    return list.total === 0 ? 'no scans' : `no scans at offset ${list.offset} (${list.total} in all)`;
  }
  const rows = list.scans.map((s) => [
    s.id,
    state(s),
    s.createdAt,
    String(s.counts.scanned),
    String(s.counts.matched),
    String(s.counts.emitted),
    String(s.counts.pending),
    s.options.dryRun ? 'dry run' : '',
  ]);
  const first = list.offset + 1;
  const last = list.offset + list.scans.length;
  const more = last < list.total ? `; next page: --offset ${last}` : '';
  return [
    table(['ID', 'STATUS', 'CREATED', 'SCANNED', 'MATCHED', 'EMITTED', 'PENDING', ''], rows),
    `scans ${first}-${last} of ${list.total}, newest first${more}`,
  ].join('\n');
}

/** One scan in full: the summary's counts, then when, the rule and the options. */
export function scanText(scan: ScanView): string {
  const [head, ...counts] = summary(scan).split('\n');
  return [
    `${head}${scan.phase ? ` (${scan.phase})` : ''}`,
    `  created ${scan.createdAt}, started ${scan.startedAt ?? '-'}, finished ${scan.finishedAt ?? '-'}`,
    `  asOf      ${scan.asOf}`,
    `  condition ${JSON.stringify(scan.condition)}`,
    `  action    ${JSON.stringify(scan.action)}`,
    `  options   ${JSON.stringify(scan.options)}`,
    ...(scan.pace === null ? [] : [`  pace      ${paceDetail(scan.pace)}`]),
    ...counts,
  ].join('\n');
}

export function when(schedule: Pick<ScheduleView, 'interval' | 'cron' | 'timeZone'>): string {
  const rule = schedule.interval !== undefined ? `every ${schedule.interval}` : `cron ${schedule.cron ?? '?'}`;
  return `${rule} (${schedule.timeZone})`;
}

export function scheduleListText(schedules: ScheduleView[]): string {
  if (schedules.length === 0) return 'no schedules';
  const rows = schedules.map((s) => [
    s.id,
    s.name,
    when(s),
    s.paused ? 'paused' : 'active',
    s.nextRunAt ?? '-',
    s.lastRunAt ?? '-',
  ]);
  return table(['ID', 'NAME', 'WHEN', 'STATE', 'NEXT RUN', 'LAST RUN'], rows);
}

/** One schedule in full: when it runs, its template, its last runs. */
export function scheduleText(schedule: ScheduleView): string {
  const runs = schedule.lastRuns.map(
    (r) =>
      `    ${r.dueAt}  scan ${r.scanId} ${r.status}, matched ${r.counts.matched}, emitted ${r.counts.emitted}` +
      (r.missed > 0 ? `, ${r.missed} missed due times folded in` : ''),
  );
  return [
    `schedule ${escapeValue(schedule.id)} "${escapeValue(schedule.name)}" ${schedule.paused ? 'paused' : 'active'}`,
    `  runs      ${escapeValue(when(schedule))}`,
    `  created   ${schedule.createdAt}`,
    `  next run  ${schedule.nextRunAt ?? (schedule.paused ? '- (paused)' : '-')}`,
    `  last run  ${schedule.lastRunAt ?? '-'}`,
    `  template  ${JSON.stringify(schedule.template)}`,
    ...(runs.length > 0 ? ['  last runs, newest first:', ...runs] : ['  no runs yet']),
  ].join('\n');
}
