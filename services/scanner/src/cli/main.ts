#!/usr/bin/env node
// `state-relay` (the scanner package's bin; `pnpm scan` from a checkout): the process around runCli.
import { runCli } from './run';
import { EXIT } from './exit-codes';

runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  onInterrupt(listener) {
    process.once('SIGINT', listener);
    return () => process.off('SIGINT', listener);
  },
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`state-relay: unexpected error: ${(err as Error).message}\n`);
    process.exitCode = EXIT.api;
  },
);
