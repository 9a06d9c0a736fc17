import { execFileSync } from 'node:child_process';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { formatWithPrettier } from '@state-relay/testkit';

// What the campaign and the soak write: the run's provenance (commit, working tree, machine),
// JSON next to the docs (the docs blocks are written by testkit's writeDocsBlock).

export const ROOT = path.resolve(__dirname, '..', '..');

export interface RunMeta {
  commit: string;
  /** Uncommitted changes the images were built with (services, packages, test/faults), from git status. */
  uncommitted: string[];
  startedAt: string;
  finishedAt?: string;
  command: string;
  machine: { cpus: number; memoryGiB: number; node: string; runtime: string };
}

function git(args: string[]): string {
  try {
    // trimEnd only: porcelain lines start with a status column that may be a space.
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trimEnd();
  } catch {
    return '';
  }
}

export function runMeta(command: string): RunMeta {
  return {
    commit: git(['rev-parse', 'HEAD']) || 'unknown',
    uncommitted: git(['status', '--porcelain', '--', 'services', 'packages', 'test/faults'])
      .split('\n')
      .filter(Boolean),
    startedAt: new Date().toISOString(),
    command,
    machine: {
      cpus: os.cpus().length,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      runtime: process.env.STATE_RELAY_RUNTIME ?? 'unknown',
    },
  };
}

/** One line saying which commit and tree a result was made on. */
export function provenance(meta: RunMeta): string {
  const tree =
    meta.uncommitted.length === 0
      ? 'clean working tree'
      : `uncommitted changes in ${meta.uncommitted.length} file(s): ${meta.uncommitted
          .slice(0, 6)
          .map((l) => l.slice(3))
          .join(', ')}${meta.uncommitted.length > 6 ? ', …' : ''}`;
  const m = meta.machine;
  return (
    `commit \`${meta.commit.slice(0, 12)}\` (${tree}); ${meta.startedAt.slice(0, 16).replace('T', ' ')} to ` +
    `${(meta.finishedAt ?? '').slice(0, 16).replace('T', ' ')} UTC; ${m.cpus} cores, ${m.memoryGiB} GiB, Node ${m.node}, ${m.runtime}`
  );
}

let written = 0;

/**
 * Writes `data` as JSON, formatted as the repo's format check wants it (docs/faults/*.json are
 * checked): to a file of its own, formatted there, then renamed over `file`, so two writes that
 * overlap (the campaign's after-run write and its last one) leave one whole file, never a mix.
 */
export async function writeJson(file: string, data: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temp = path.join(path.dirname(file), `.${path.basename(file, '.json')}.${process.pid}-${++written}.json`);
  try {
    await writeFile(temp, `${JSON.stringify(data, null, 2)}\n`);
    formatWithPrettier([temp]);
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
export const int = (n: number) => n.toLocaleString('en-US');
