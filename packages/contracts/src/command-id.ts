import { createHash } from 'node:crypto';

/**
 * The id of the command a scan sends for a key. Deterministic, so a re-emitted command
 * (scanner restart, producer retry) carries the same id and the processor applies it once.
 * The NUL separator keeps ("a", "bc") and ("ab", "c") apart.
 */
export function commandIdFor(scanId: string, key: string): string {
  return createHash('sha256').update(`${scanId}\u0000${key}`, 'utf8').digest('hex').slice(0, 32);
}
