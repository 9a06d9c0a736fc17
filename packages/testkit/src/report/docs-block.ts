import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * `text` with what lies between the `<!-- NAME:start … -->` and `<!-- NAME:end -->` markers
 * replaced by `content`; the markers stay as they are (the start marker may say more after
 * NAME:start, e.g. who writes the block). Throws when a marker is missing.
 */
export function replaceDocsBlock(text: string, name: string, content: string, where = 'the text'): string {
  const startAt = text.indexOf(`<!-- ${name}:start`);
  const startEnd = startAt < 0 ? -1 : text.indexOf('-->', startAt);
  const end = `<!-- ${name}:end -->`;
  const endAt = startEnd < 0 ? -1 : text.indexOf(end, startEnd);
  if (endAt < 0) {
    throw new Error(
      `${where} has no block ${name}: it needs a line "<!-- ${name}:start -->" and, after it, "${end}" to write between`,
    );
  }
  const head = text.slice(0, startEnd + '-->'.length);
  return `${head}\n\n${content.trim()}\n\n${text.slice(endAt)}`;
}

/** replaceDocsBlock on a markdown file, which is then formatted as `prettier --check` expects. */
export function writeDocsBlock(file: string, name: string, content: string): void {
  writeFileSync(file, replaceDocsBlock(readFileSync(file, 'utf8'), name, content, file));
  formatWithPrettier([file]);
}

/**
 * Formats files in place with the prettier installed above this module (a root devDependency), so
 * format:check stays clean; nothing when none is installed. Through its CLI in a child process: its
 * API loads ESM, which jest's module system cannot.
 */
export function formatWithPrettier(files: string[]): void {
  if (files.length === 0) return;
  const bin = join('node_modules', 'prettier', 'bin', 'prettier.cjs');
  const root = installedAt(__dirname, bin);
  if (root === undefined) return;
  execFileSync(process.execPath, [join(root, bin), '--write', ...files.map((f) => resolve(f))], {
    cwd: root,
    stdio: 'ignore',
  });
}

/** The nearest directory at or above `dir` that holds `relative`. */
function installedAt(dir: string, relative: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, relative))) return at;
    if (dirname(at) === at) return undefined;
  }
}
