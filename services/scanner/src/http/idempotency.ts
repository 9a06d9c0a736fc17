import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { SqliteFile } from '@state-relay/store';
import { ScannerError } from '../errors';

/**
 * The table of this store in scans.sqlite (the file's version 3): one row per Idempotency-Key a
 * create answered, with a digest of the body and the id of what it created. Idempotent, as the
 * file's other DDL (see openScansDatabase).
 */
export const IDEMPOTENCY_TABLES = `
  CREATE TABLE IF NOT EXISTS idempotency_keys (
    route TEXT NOT NULL,                     -- 'POST /scans' or 'POST /schedules'
    key TEXT NOT NULL,
    body_sha256 TEXT NOT NULL,               -- of the body as canonical JSON (keys sorted)
    resource_id TEXT NOT NULL,               -- the scan or schedule the first request created
    created_at INTEGER NOT NULL,
    PRIMARY KEY (route, key)
  ) WITHOUT ROWID;`;

/** The header, as fastify sees it (lower case), and what a key may be: 1 to 255 visible ASCII characters. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const IdempotencyHeaders = Type.Object({
  [IDEMPOTENCY_HEADER]: Type.Optional(
    Type.String({
      pattern: '^[\\x21-\\x7e]{1,255}$',
      description:
        'Makes the create safe to retry: the same key with the same body answers with what the first request created; ' +
        'with another body, 409 idempotency_key_conflict. Keys are kept IDEMPOTENCY_KEY_TTL_MS (24 h by default). ' +
        '1 to 255 visible ASCII characters, e.g. a UUID.',
    }),
  ),
});

export type IdempotentRoute = 'POST /scans' | 'POST /schedules';

/** The same key came back with another body: the client reused a key for a different request. */
export class IdempotencyKeyConflictError extends ScannerError {
  override readonly name = 'IdempotencyKeyConflictError';
  constructor(route: IdempotentRoute, key: string, firstAt: number) {
    super(
      'idempotency_key_conflict',
      `Idempotency-Key ${JSON.stringify(key)} was used for ${route} at ${new Date(firstAt).toISOString()} with a different body; ` +
        'send a new key for a different request',
    );
  }
}

interface KeyRow {
  body_sha256: string;
  resource_id: string;
  created_at: number;
}

/** Idempotency-Key on the creating routes, in the scanner's own SQLite (it survives a restart). */
export class IdempotencyKeys {
  private readonly stmt;
  private readonly onceTx: (
    route: IdempotentRoute,
    key: string,
    digest: string,
    create: () => string,
  ) => { id: string; replayed: boolean };
  private lastPrune = 0;

  constructor(
    file: SqliteFile,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    const db = file.db;
    this.stmt = {
      get: db.prepare<[string, string], KeyRow>(
        'SELECT body_sha256, resource_id, created_at FROM idempotency_keys WHERE route = ? AND key = ?',
      ),
      insert: db.prepare(
        'INSERT OR REPLACE INTO idempotency_keys (route, key, body_sha256, resource_id, created_at) VALUES (?, ?, ?, ?, ?)',
      ),
      prune: db.prepare('DELETE FROM idempotency_keys WHERE created_at < ?'),
    };
    // One SQLite transaction: the look-up, the create (its rows are on this connection too) and the
    // key commit together or not at all; a create that throws (400, 429) leaves no key behind.
    this.onceTx = db.transaction((route: IdempotentRoute, key: string, digest: string, create: () => string) => {
      const now = this.now();
      const row = this.stmt.get.get(route, key);
      if (row && row.created_at >= now - this.ttlMs) {
        if (row.body_sha256 !== digest) throw new IdempotencyKeyConflictError(route, key, row.created_at);
        return { id: row.resource_id, replayed: true };
      }
      const id = create();
      this.stmt.insert.run(route, key, digest, id, now);
      return { id, replayed: false };
    });
  }

  /**
   * Runs `create` (which returns the new resource's id) unless `key` was answered for `route` within
   * the TTL: then the id it created (replayed), or IdempotencyKeyConflictError when the body
   * differs. Without a key, simply creates. Keys past the TTL are pruned at most once a minute.
   */
  run(
    route: IdempotentRoute,
    key: string | undefined,
    body: unknown,
    create: () => string,
  ): { id: string; replayed: boolean } {
    if (key === undefined) return { id: create(), replayed: false };
    const now = this.now();
    if (now - this.lastPrune >= 60_000) {
      this.stmt.prune.run(now - this.ttlMs);
      this.lastPrune = now;
    }
    return this.onceTx(route, key, digestOf(body), create);
  }
}

/** SHA-256 of the body as canonical JSON: object keys sorted at every level, so key order does not matter. */
export function digestOf(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
