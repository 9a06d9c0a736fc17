import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { SqliteFile } from '@state-relay/store';
import { InvalidRequestError, ScannerError } from '../errors';

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
    body: unknown,
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
    // A new key digests the body after the create validated it, so a hostile body gets the same
    // 400 with a key as without one; a replay digests it first (digestOf bounds its depth).
    this.onceTx = db.transaction((route: IdempotentRoute, key: string, body: unknown, create: () => string) => {
      const now = this.now();
      const row = this.stmt.get.get(route, key);
      if (row && row.created_at >= now - this.ttlMs) {
        if (row.body_sha256 !== digestOf(body)) throw new IdempotencyKeyConflictError(route, key, row.created_at);
        return { id: row.resource_id, replayed: true };
      }
      const id = create();
      this.stmt.insert.run(route, key, digestOf(body), id, now);
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
    return this.onceTx(route, key, body, create);
  }
}

/**
 * How deep a body may nest for its digest. Far above anything the rules accept (32 levels of
 * conditions, each an object and an array, over a JSON value of 32 levels), far below the stack.
 */
export const MAX_DIGEST_DEPTH = 256;

/** Segments of the path a too-deep body is reported at: enough to name the field, never 6,000 of them. */
const NAMED_SEGMENTS = 3;

/**
 * SHA-256 of the body as canonical JSON: object keys sorted at every level, so key order does not
 * matter. Iterative, with a depth cap: a body nested deeper than MAX_DIGEST_DEPTH is an
 * InvalidRequestError naming the field it is under, never a stack overflow.
 */
export function digestOf(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

type Work = { text: string } | { value: unknown; depth: number; path: string };

function canonicalJson(root: unknown): string {
  const out: string[] = [];
  // Last in, first out: each container pushes its closing text, then its members in reverse.
  const stack: Work[] = [{ value: root, depth: 0, path: '/body' }];
  while (stack.length > 0) {
    const work = stack.pop()!;
    if ('text' in work) {
      out.push(work.text);
      continue;
    }
    const { value, depth, path } = work;
    if (value === null || typeof value !== 'object') {
      out.push(JSON.stringify(value) ?? 'null');
      continue;
    }
    if (depth >= MAX_DIGEST_DEPTH) {
      throw new InvalidRequestError([{ path, message: `nested deeper than ${MAX_DIGEST_DEPTH} levels` }]);
    }
    const at = (segment: string | number) =>
      depth < NAMED_SEGMENTS ? `${path}/${String(segment).replace(/~/g, '~0').replace(/\//g, '~1')}` : path;
    if (Array.isArray(value)) {
      out.push('[');
      stack.push({ text: ']' });
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push({ value: value[i], depth: depth + 1, path: at(i) });
        if (i > 0) stack.push({ text: ',' });
      }
      continue;
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .sort()
      .filter((k) => record[k] !== undefined);
    out.push('{');
    stack.push({ text: '}' });
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i]!;
      stack.push({ value: record[k], depth: depth + 1, path: at(k) });
      stack.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(k)}:` });
    }
  }
  return out.join('');
}
