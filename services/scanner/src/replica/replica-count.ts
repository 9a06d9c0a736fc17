import { Worker } from 'node:worker_threads';

// The worker opens its own read-only connection: a count(*) over a million-row replica takes
// 100-400 ms of one statement, which on the main thread would stall the API for that long.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { readonly: true, fileMustExist: true });
try {
  parentPort.postMessage(db.prepare('SELECT count(*) FROM entities').pluck().get());
} finally {
  db.close();
}`;

/**
 * Rows in the replica at `path`, counted on a worker thread. Reads the store's table directly
 * (read-only); only the ETA depends on it, so callers treat a failure as "unknown".
 */
export function countReplicaRows(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path, driver: require.resolve('better-sqlite3') },
    });
    worker.once('message', (n: unknown) =>
      typeof n === 'number' ? resolve(n) : reject(new Error(`count returned ${typeof n}`)),
    );
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the counting worker exited with code ${code}`)));
  });
}
