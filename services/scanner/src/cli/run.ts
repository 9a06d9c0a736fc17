// One invocation, from argv to an exit code; main.ts gives it the process's streams and signals.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCli, UsageError } from './args';
import { ScannerClient } from './client';
import { ApiError } from './errors';
import { EXIT, NOT_FOUND_CODES, type ExitCode } from './exit-codes';
import { Output, type CliStream } from './output';
import { runScanCommand } from './scan-commands';
import { runScheduleCommand } from './schedule-commands';
import { escapeText, escapeValue } from './escape';

export interface CliIO {
  env: NodeJS.ProcessEnv;
  stdout: CliStream;
  stderr: CliStream;
  /** Calls `listener` on Ctrl-C (SIGINT) until the returned function is called. */
  onInterrupt(listener: () => void): () => void;
}

export async function runCli(argv: string[], io: CliIO): Promise<ExitCode> {
  let invocation;
  try {
    invocation = parseCli(argv, io.env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(
      `state-relay: ${escapeText(err.message)}\nstate-relay --help lists the commands; <noun> <verb> --help their flags.\n`,
    );
    return EXIT.usage;
  }
  if (invocation.kind === 'help') {
    io.stdout.write(`${invocation.text}\n`);
    return EXIT.ok;
  }
  if (invocation.kind === 'version') {
    io.stdout.write(`${scannerVersion()}\n`);
    return EXIT.ok;
  }

  const out = new Output(invocation.json, io.stdout, io.stderr);
  for (const warning of invocation.warnings) out.error(warning);
  const ctx = {
    client: new ScannerClient(invocation.url, invocation.token),
    url: invocation.url,
    out,
    onInterrupt: io.onInterrupt,
  };
  const { request } = invocation;
  try {
    return request.command.startsWith('scans ')
      ? await runScanCommand(request as Parameters<typeof runScanCommand>[0], ctx)
      : await runScheduleCommand(request as Parameters<typeof runScheduleCommand>[0], ctx);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    out.error(apiErrorText(err));
    return NOT_FOUND_CODES.has(err.code) ? EXIT.notFound : EXIT.api;
  }
}

/** `404 scan_not_found: no scan with id "x"`, then each offending field on a line of its own. */
export function apiErrorText(err: ApiError): string {
  const detail = err.issues.map((i) => `\n  ${escapeValue(i.path)}: ${escapeValue(i.message)}`).join('');
  const omitted = err.issuesOmitted > 0 ? `\n  and ${err.issuesOmitted} more` : '';
  return `${err.status === null ? '' : `${err.status} ${err.code}: `}${escapeValue(err.message)}${detail}${omitted}`;
}

/** The scanner package's version (its package.json, two levels up from src/cli and dist/cli). */
export function scannerVersion(): string {
  const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { version: string };
  return pkg.version;
}
