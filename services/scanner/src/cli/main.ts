// `pnpm scan ...`: create a scan, follow it with a progress bar, print the outcome counts.
import { ApiError, ScannerClient } from './client';
import { parseCli, USAGE, UsageError } from './args';
import { ProgressReporter, summary } from './progress';
import type { ScanView } from '../scans/scan-view';

const EXIT = { completed: 0, notCompleted: 1, usage: 2, api: 3 } as const;
const FINISHED = new Set(['completed', 'cancelled', 'failed']);

async function main(): Promise<number> {
  let request;
  try {
    request = parseCli(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`scan: ${err.message}\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  if ('help' in request) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.completed;
  }
  for (const warning of request.warnings) process.stderr.write(`scan: ${warning}\n`);
  const client = new ScannerClient(request.url, request.token);
  try {
    let scan = await client.createScan(request.body);
    process.stdout.write(`scan ${scan.id} created (${request.url}${scan.url}), asOf ${scan.asOf}\n`);
    if (!request.follow) return EXIT.completed;
    scan = await follow(client, scan);
    process.stdout.write(`${summary(scan)}\n`);
    return scan.status === 'completed' ? EXIT.completed : EXIT.notCompleted;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const detail = err.issues.map((i) => `\n  ${i.path}: ${i.message}`).join('');
    process.stderr.write(`scan: ${err.status === null ? '' : `${err.status} ${err.code}: `}${err.message}${detail}\n`);
    return EXIT.api;
  }
}

/** Polls until the scan finishes: on a TTY one line redrawn in place, otherwise a line at most every 2 s. */
async function follow(client: ScannerClient, first: ScanView): Promise<ScanView> {
  const tty = process.stdout.isTTY === true;
  const progress = new ProgressReporter({
    write: (text) => process.stdout.write(text),
    isTTY: tty,
    get columns() {
      return process.stdout.columns;
    },
  });
  let scan = first;
  process.once('SIGINT', () => {
    progress.end();
    process.stdout.write(`stopped following; scan ${scan.id} goes on (cancel: POST ${scan.url}/cancel)\n`);
    process.exit(EXIT.notCompleted);
  });
  try {
    for (;;) {
      progress.update(scan);
      if (FINISHED.has(scan.status)) return scan;
      await new Promise((r) => setTimeout(r, tty ? 250 : 500));
      scan = await client.getScan(scan.id);
    }
  } finally {
    progress.end(); // also before an API error's message
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`scan: unexpected error: ${(err as Error).message}\n`);
    process.exit(EXIT.api);
  },
);
