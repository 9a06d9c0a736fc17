// Where each kind of output goes. With --json, stdout holds exactly one JSON document (the
// command's result) and everything else (progress, notes) goes to stderr; without it, results and
// notes go to stdout, warnings and errors to stderr. Text for people has its control characters
// made visible (escape.ts); JSON escapes them itself.

import { escapeText, redactUrl } from './escape';

/** Text for people: no control characters, no URL credentials. */
const shown = (text: string) => escapeText(redactUrl(text));

export interface CliStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export class Output {
  constructor(
    readonly json: boolean,
    readonly stdout: CliStream,
    readonly stderr: CliStream,
  ) {}

  /** The command's result: `document` as JSON with --json, else `text` (nothing when undefined). */
  result(document: unknown, text: string | undefined): void {
    if (this.json) this.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    else if (text !== undefined) this.stdout.write(`${shown(text)}\n`);
  }

  /** A note along the way ("scan … created"): stdout, or stderr with --json. */
  note(text: string): void {
    this.progressStream.write(`${shown(text)}\n`);
  }

  /** Progress lines share the notes' stream. */
  get progressStream(): CliStream {
    return this.json ? this.stderr : this.stdout;
  }

  error(text: string): void {
    this.stderr.write(`state-relay: ${shown(text)}\n`);
  }
}
