// Micro-benchmark of the store's hot paths. Not a test: prints figures, asserts nothing.
//   pnpm bench:store     (builds bench/, then runs)
// Env-free on purpose; sizes are the constants below.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { encodeStoredEntity, seenOf } from '@state-relay/contracts';
import { ReplicaStore, TaskStore, type ChangelogRecord, type StoredEntity } from '@state-relay/store';

const COMMIT_ROWS = 100_000;
const APPLY_ROWS = 100_000;
const WALK_ROWS = 1_000_000;
const WALK_FILL_BATCH = 50_000;
const CHUNK_LIMIT = 2_000;
const DAY_MS = 86_400_000;
const AS_OF = Date.UTC(2025, 0, 1);

/** An account like the demo domain's; every 10th one is dormant-looking. */
function account(i: number): StoredEntity {
  const stale = i % 10 === 0;
  return {
    version: 1 + (i % 7),
    value: {
      status: stale ? 'dormant' : 'active',
      balance: (i * 37) % 10_000,
      counters: { payments: i % 13, activities: i % 101 },
      lastActiveAt: AS_OF - (stale ? 40 : i % 20) * DAY_MS,
      email: `user${i}@example.com`,
    },
    seen: seenOf([`cmd-${i}-a`, `cmd-${i}-b`]),
  };
}
const key = (i: number) => `acct-${String(i).padStart(8, '0')}`;

const REPS = 5;
const WALK_REPS = 3;

function timed<T>(fn: () => T): { result: T; ms: number } {
  const start = performance.now();
  const result = fn();
  return { result, ms: performance.now() - start };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** Median and best of several runs: a shared machine makes single runs noisy. */
function report(label: string, rows: number, runsMs: number[], extra = ''): void {
  const sorted = [...runsMs].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const best = sorted[0]!;
  console.log(
    `${label}: median ${fmt((rows / median) * 1000)} rows/s (${median.toFixed(0)} ms), ` +
      `best ${fmt((rows / best) * 1000)} rows/s, ${runsMs.length} runs of ${fmt(rows)} rows${extra}`,
  );
}

function benchCommit(dir: string): void {
  const inserts = Array.from({ length: COMMIT_ROWS }, (_, i): [string, StoredEntity] => [key(i), account(i)]);
  const updates = inserts.map(([k, e]): [string, StoredEntity] => [k, { ...e, version: e.version + 1 }]);
  const insertMs: number[] = [];
  const updateMs: number[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    const store = TaskStore.open({ dir, task: rep });
    try {
      insertMs.push(timed(() => store.commit(inserts, '1')).ms);
      updateMs.push(timed(() => store.commit(updates, '2')).ms);
    } finally {
      store.close();
    }
  }
  report('TaskStore.commit, new keys, one transaction', COMMIT_ROWS, insertMs);
  report('TaskStore.commit, existing keys, one transaction', COMMIT_ROWS, updateMs);
}

function records(from: number, count: number): ChangelogRecord[] {
  return Array.from({ length: count }, (_, j) => {
    const i = from + j;
    return {
      partition: i % 12,
      offset: String(Math.floor(i / 12)),
      key: key(i),
      value: encodeStoredEntity(account(i)),
    };
  });
}

function benchApply(dir: string): void {
  const batch = records(0, APPLY_ROWS);
  const runsMs: number[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    const replica = ReplicaStore.open({ path: join(dir, `apply-${rep}.sqlite`) });
    try {
      runsMs.push(timed(() => replica.apply(batch)).ms);
    } finally {
      replica.close();
    }
  }
  report('ReplicaStore.apply, new keys, one transaction', APPLY_ROWS, runsMs);
}

function benchWalk(dir: string): void {
  const replica = ReplicaStore.open({ path: join(dir, 'walk.sqlite') });
  try {
    for (let i = 0; i < WALK_ROWS; i += WALK_FILL_BATCH) replica.apply(records(i, WALK_FILL_BATCH));
    console.log(`ReplicaStore filled with ${fmt(WALK_ROWS)} rows: ${(replica.sizeBytes() / 1e6).toFixed(1)} MB`);

    walk(replica, 'chunk walk, no filter', undefined, []);
    walk(replica, "chunk walk, status = 'dormant' (10% match)", "json_extract(record, '$.value.status') = ?", [
      'dormant',
    ]);
    walk(
      replica,
      "chunk walk, status = 'active' AND lastActiveAt < asOf-30d (0% match)",
      "json_extract(record, '$.value.status') = ? AND json_extract(record, '$.value.lastActiveAt') < ?",
      ['active', AS_OF - 30 * DAY_MS],
    );
  } finally {
    replica.close();
  }
}

function walk(
  replica: ReplicaStore,
  label: string,
  filterSql: string | undefined,
  filterParams: Array<string | number>,
): void {
  const runsMs: number[] = [];
  let walked = 0;
  let matched = 0;
  let chunks = 0;
  let slowestMs = 0;
  for (let rep = 0; rep < WALK_REPS; rep++) {
    let afterKey: string | null = null;
    walked = matched = chunks = 0;
    const total = timed(() => {
      for (;;) {
        const step = timed(() => replica.chunk({ afterKey, limit: CHUNK_LIMIT, filterSql, filterParams }));
        if (step.result.lastKey === null) break;
        slowestMs = Math.max(slowestMs, step.ms);
        walked += step.result.walked;
        matched += step.result.rows.length;
        chunks++;
        afterKey = step.result.lastKey;
      }
    });
    runsMs.push(total.ms);
  }
  const meanChunkMs = runsMs.reduce((a, b) => a + b, 0) / runsMs.length / chunks;
  report(
    `ReplicaStore.${label}, limit ${CHUNK_LIMIT}`,
    walked,
    runsMs,
    `; ${fmt(matched)} matched, ${chunks} chunks, mean ${meanChunkMs.toFixed(2)} ms, slowest ${slowestMs.toFixed(2)} ms`,
  );
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'state-relay-store-bench-'));
  try {
    console.log(`node ${process.version}, tmp dir ${dir}`);
    benchCommit(dir);
    benchApply(dir);
    benchWalk(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
