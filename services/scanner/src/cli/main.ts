#!/usr/bin/env node
// `state-relay` (the scanner package's bin; `pnpm scan` from a checkout): the process around runCli.
import { escapeText } from './escape';
import { runCli } from './run';
import { EXIT } from './exit-codes';

/**
 * Exits once stdout and stderr have taken everything written: waiting for the event loop to drain
 * instead would keep fetch's idle keep-alive connection open for seconds after the answer.
 */
function exit(code: number): void {
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  onInterrupt(listener) {
    process.once('SIGINT', listener);
    return () => process.off('SIGINT', listener);
  },
}).then(exit, (err: unknown) => {
  process.stderr.write(`state-relay: unexpected error: ${escapeText((err as Error).message)}\n`);
  exit(EXIT.api);
});
