import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { instanceIdClaims, type InstanceIdHolder } from '@state-relay/kafka-runtime';
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';
import { InstanceIdInUseError } from '../errors';

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

export interface InstanceIdCheck {
  admin: Pick<Admin, 'describeGroups'>;
  groupId: string;
  instanceId: string;
  /** The STATE_DIR file the id came from, when INSTANCE_ID is unset (named in the error). */
  keptIn?: string;
  logger: Logger;
  /** A group that keeps rebalancing this long is not waited for: the assigner still gives a duplicate nothing. */
  settleWithinMs?: number;
  /** Added to a holder's session timeout: a member listed that long after first seen is alive. */
  graceMs?: number;
  pollMs?: number;
}

/**
 * Refuses (InstanceIdInUseError) to start while a live member of the group carries this instance
 * id; to run before the instance producer's first InitProducerId, which would fence it. A holder
 * may be this instance's own crashed previous life, whose member lingers until its session times
 * out: a holder still listed a session timeout after first seen heartbeats, so is another process.
 * Once the holder is no longer listed (its session expired: the group rebalances) the start goes
 * on at once, so it can join that same rebalance.
 */
export async function assertInstanceIdFree(check: InstanceIdCheck): Promise<void> {
  const {
    admin,
    groupId,
    instanceId,
    keptIn,
    logger,
    settleWithinMs = 90_000,
    graceMs = 3_000,
    pollMs = 1_000,
  } = check;
  const begun = Date.now();
  let holder: InstanceIdHolder | undefined;
  let heldSince: number | undefined;
  for (; ; await sleep(pollMs)) {
    const claims = await instanceIdClaims(admin, groupId, instanceId);
    if (claims.settled) holder = claims.holders[0];
    else if (holder && !claims.memberIds.includes(holder.memberId)) holder = undefined;
    if (!holder) {
      if (claims.settled || heldSince !== undefined) return; // none, or the holder left
      if (Date.now() - begun < settleWithinMs) continue; // rebalancing: members listed without their ids
      logger.warn(
        { instanceId, waitedMs: Date.now() - begun },
        'the group is still rebalancing: INSTANCE_ID not checked',
      );
      return;
    }
    if (heldSince === undefined) {
      heldSince = Date.now();
      logger.info(
        { instanceId, memberId: holder.memberId, clientHost: holder.clientHost, host: holder.identity.host },
        "a group member carries this INSTANCE_ID: waiting out its session timeout (a crashed previous life's member leaves by then, a live process's stays)",
      );
    }
    if (Date.now() - heldSince >= holder.identity.sessionTimeoutMs + graceMs) {
      const { memberId, clientHost, identity } = holder;
      throw new InstanceIdInUseError(
        instanceId,
        { memberId, clientHost, host: identity.host, startedAt: identity.startedAt },
        keptIn,
      );
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
