// `scans list|get|create|cancel|follow`.
import type { ScanView } from '../scans/scan-view';
import { DEFAULT_URL, type CliRequest } from './args';
import type { ScannerClient } from './client';
import { EXIT, type ExitCode } from './exit-codes';
import { followScan } from './follow';
import { scanListText, scanText } from './format';
import type { Output } from './output';
import { ProgressReporter, summary } from './progress';
import { escapeText, redactUrl } from './escape';

export interface CommandContext {
  client: ScannerClient;
  url: string;
  out: Output;
  /** Calls `listener` on Ctrl-C until the returned function is called. */
  onInterrupt(listener: () => void): () => void;
}

type ScanRequest = Extract<CliRequest, { command: `scans ${string}` }>;

export async function runScanCommand(request: ScanRequest, ctx: CommandContext): Promise<ExitCode> {
  const { client, out } = ctx;
  switch (request.command) {
    case 'scans list': {
      const list = await client.listScans(request.limit, request.offset);
      out.result(list, scanListText(list));
      return EXIT.ok;
    }
    case 'scans get': {
      const scan = await client.getScan(request.id);
      out.result(scan, scanText(scan));
      return EXIT.ok;
    }
    case 'scans create': {
      const scan = await client.createScan(request.body);
      out.note(`scan ${scan.id} created (${redactUrl(ctx.url)}${scan.url}), asOf ${scan.asOf}`);
      if (request.follow) return follow(scan, ctx);
      out.result(scan, undefined);
      return EXIT.ok;
    }
    case 'scans cancel': {
      const scan = await client.cancelScan(request.id);
      const awaiting =
        scan.counts.pending > 0 ? `; ${scan.counts.pending} commands sent still await their results` : '';
      out.result(scan, `scan ${scan.id} ${scan.status}${awaiting}`);
      return EXIT.ok;
    }
    case 'scans follow':
      return follow(await client.getScan(request.id), ctx);
  }
}

/** Follows to the end (0 completed, 1 cancelled or failed) or to Ctrl-C (130: the scan goes on). */
async function follow(first: ScanView, ctx: CommandContext): Promise<ExitCode> {
  const stream = ctx.out.progressStream;
  const tty = stream.isTTY === true;
  const progress = new ProgressReporter({
    write: (text) => stream.write(text),
    isTTY: tty,
    get columns() {
      return stream.columns;
    },
  });
  const interrupt = new AbortController();
  const stopListening = ctx.onInterrupt(() => interrupt.abort());
  let followed;
  try {
    followed = await followScan(ctx.client, first, progress, interrupt.signal, tty ? 250 : 500);
  } finally {
    stopListening();
  }
  const { scan } = followed;
  if (followed.interrupted) {
    ctx.out.stderr.write(`${escapeText(interruptedNote(scan, ctx.url))}\n`);
    ctx.out.result(scan, undefined);
    return EXIT.interrupted;
  }
  ctx.out.result(scan, summary(scan));
  return scan.status === 'completed' ? EXIT.ok : EXIT.notCompleted;
}

/** What Ctrl-C leaves: the scan runs on; how to cancel it or follow it again. */
export function interruptedNote(scan: Pick<ScanView, 'id' | 'status'>, url: string): string {
  const where = url === DEFAULT_URL ? '' : ` --url ${redactUrl(url)}`;
  return [
    `stopped following; scan ${scan.id} goes on (${scan.status}).`,
    `  cancel it:        state-relay scans cancel ${scan.id}${where}`,
    `  follow it again:  state-relay scans follow ${scan.id}${where}`,
  ].join('\n');
}
