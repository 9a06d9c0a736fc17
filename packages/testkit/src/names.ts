import { randomBytes } from 'node:crypto';

/** A name no other test uses: topics and groups are unique per test. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}
