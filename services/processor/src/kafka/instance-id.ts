import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file in STATE_DIR that keeps a generated instance id across restarts. */
export const INSTANCE_ID_FILE = 'instance-id';

/**
 * The instance's id (exactly-once v2: its transactional id is `<APP_ID>-instance-<id>`): `configured`
 * when set, else the one kept in `stateDir`, made once. Stable across restarts of the same instance,
 * so a restarted instance fences its earlier producer at once instead of waiting out its transaction.
 */
export function instanceIdFor(stateDir: string, configured: string | undefined): string {
  if (configured) return configured;
  const file = join(stateDir, INSTANCE_ID_FILE);
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (/^[A-Za-z0-9._-]{1,64}$/.test(kept)) return kept;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const made = randomBytes(6).toString('hex');
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(file, `${made}\n`, { flag: 'w' });
  return made;
}
