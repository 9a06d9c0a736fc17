/** The demo's "now": events are generated relative to it and every sweep uses it as asOf. */
export const AS_OF = Date.UTC(2026, 10, 1);

/** Progress on stderr; the results go to stdout. */
export function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}
