import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

// The README's Layout block is the map a newcomer reads first: every path it names must exist,
// and every package, service and top-level folder git tracks must be on it.

const ROOT = resolve(__dirname, '../..');

function layoutBlock(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const match = /## Layout\n\n```\n([\s\S]*?)```/.exec(readme);
  if (!match) throw new Error('README.md has no "## Layout" code block');
  return match[1]!;
}

/** The paths a layout line starts with ("test/e2e, test/faults" names two). */
function namedPaths(block: string): string[] {
  return block
    .split('\n')
    .filter((line) => /^\S/.test(line))
    .flatMap((line) =>
      line
        .split(/\s{2,}/)[0]!
        .split(',')
        .map((p) => p.trim().replace(/\/$/, '')),
    );
}

/** Paths inside a service a layout line names: src/tasks, src/extension.ts, … */
function servicePaths(block: string): string[] {
  const paths: string[] = [];
  let service: string | undefined;
  for (const line of block.split('\n')) {
    if (/^\S/.test(line)) service = /^(services\/[a-z-]+)/.exec(line)?.[1];
    if (!service) continue;
    for (const m of line.matchAll(/\bsrc\/[\w./-]+/g)) paths.push(`${service}/${m[0].replace(/[.,]$/, '')}`);
  }
  return paths;
}

function trackedDirs(): Set<string> {
  const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n');
  const dirs = new Set<string>();
  for (const f of files) {
    const parts = f.split('/');
    if (parts.length > 1 && !parts[0]!.startsWith('.')) dirs.add(parts[0]!);
    if (parts.length > 2 && (parts[0] === 'packages' || parts[0] === 'services')) dirs.add(`${parts[0]}/${parts[1]}`);
  }
  return dirs;
}

describe('README layout', () => {
  const block = layoutBlock();
  const named = namedPaths(block);

  it('names only paths that exist', () => {
    const missing = [...named, ...servicePaths(block)].filter((p) => !existsSync(join(ROOT, p)));
    expect(missing).toEqual([]);
  });

  it('names every package, service and top-level folder', () => {
    const covered = (dir: string) => named.some((p) => p === dir || p.startsWith(`${dir}/`));
    const unnamed = [...trackedDirs()].filter((d) => !covered(d)).sort();
    expect(unnamed).toEqual([]);
  });
});
