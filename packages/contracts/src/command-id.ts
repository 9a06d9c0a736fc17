import { createHash } from 'node:crypto';
import { MAX_REMEMBERED_COMMAND_IDS } from './types';

/**
 * The id of the command a scan sends for a key. Deterministic, so a re-emitted command
 * (scanner restart, producer retry) carries the same id and the processor applies it once.
 * The NUL separator keeps ("a", "bc") and ("ab", "c") apart.
 */
export function commandIdFor(scanId: string, key: string): string {
  return createHash('sha256').update(`${scanId}\u0000${key}`, 'utf8').digest('hex').slice(0, 32);
}

/** Characters of one command digest in StoredEntity.seen: 64 bits as unpadded base64url. */
export const COMMAND_DIGEST_LENGTH = 11;
const DIGEST_BYTES = 8;
const SEEN_PATTERN = /^(?:[A-Za-z0-9_-]{10}[AEIMQUYcgkosw048])*$/;

/**
 * What an entity remembers of a command it judged: the first 64 bits of SHA-256 of its id,
 * 11 characters. An entity's changelog record grows by 11 bytes per command instead of the
 * id's length; two different ids share a digest with probability 2⁻⁶⁴, so a new command is
 * taken for one of the ≤ 64 remembered ones with probability below 64 · 2⁻⁶⁴ ≈ 3.5 × 10⁻¹⁸.
 */
export function commandDigest(commandId: string): string {
  return createHash('sha256').update(commandId, 'utf8').digest().subarray(0, DIGEST_BYTES).toString('base64url');
}

/** Whether `seen` (digests, oldest first) holds the digest of `commandId`. */
export function hasSeen(seen: string, commandId: string): boolean {
  return seenHas(seen, commandDigest(commandId));
}

/** Whether `seen` holds `digest` (a commandDigest): for a caller that needs the digest twice and hashes once. */
export function seenHas(seen: string, digest: string): boolean {
  for (let i = seen.indexOf(digest); i !== -1; i = seen.indexOf(digest, i + 1)) {
    if (i % COMMAND_DIGEST_LENGTH === 0) return true;
  }
  return false;
}

/** `seen` with `commandId` remembered last, keeping the newest MAX_REMEMBERED_COMMAND_IDS. */
export function rememberCommand(seen: string, commandId: string): string {
  return rememberDigest(seen, commandDigest(commandId));
}

/** `seen` with `digest` (a commandDigest) remembered last, keeping the newest MAX_REMEMBERED_COMMAND_IDS. */
export function rememberDigest(seen: string, digest: string): string {
  const next = seen + digest;
  const max = MAX_REMEMBERED_COMMAND_IDS * COMMAND_DIGEST_LENGTH;
  return next.length > max ? next.slice(next.length - max) : next;
}

/** How many commands `seen` remembers. */
export function seenCount(seen: string): number {
  return seen.length / COMMAND_DIGEST_LENGTH;
}

/** A well-formed `seen` string: whole digests of valid base64url for 8 bytes. */
export function isSeen(v: unknown): v is string {
  return typeof v === 'string' && v.length % COMMAND_DIGEST_LENGTH === 0 && SEEN_PATTERN.test(v);
}

/** The digests of a list of command ids (what a record of the first changelog format remembered). */
export function seenOf(commandIds: readonly string[]): string {
  return commandIds.reduce(rememberCommand, '');
}
