import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replaceDocsBlock, writeDocsBlock } from '../../src/report/docs-block';

const page = [
  '# Results',
  '',
  'Prose before.',
  '',
  '<!-- bench:results:start (written by `pnpm bench`; edit outside these markers) -->',
  '',
  'old figures',
  '',
  '<!-- bench:results:end -->',
  '',
  '<!-- soak:start -->',
  'old soak',
  '<!-- soak:end -->',
  'Prose after.',
  '',
].join('\n');

describe('replaceDocsBlock', () => {
  it('replaces what lies between the markers, keeping them and everything around them', () => {
    const next = replaceDocsBlock(page, 'bench:results', '\nnew figures\n');
    expect(next).toContain(
      '<!-- bench:results:start (written by `pnpm bench`; edit outside these markers) -->\n\nnew figures\n\n<!-- bench:results:end -->',
    );
    expect(next).not.toContain('old figures');
    expect(next.startsWith('# Results\n\nProse before.\n\n')).toBe(true);
    expect(next).toContain('<!-- soak:start -->\nold soak\n<!-- soak:end -->\nProse after.\n');
  });

  it('touches only the named block, and writing it twice gives the same text', () => {
    const once = replaceDocsBlock(page, 'soak', 'new soak');
    expect(once).toContain('old figures');
    expect(replaceDocsBlock(once, 'soak', 'new soak')).toBe(once);
  });

  it('says which marker a text lacks', () => {
    expect(() => replaceDocsBlock(page, 'campaign', 'x', 'docs/faults.md')).toThrow(
      'docs/faults.md has no block campaign: it needs a line "<!-- campaign:start -->" and, after it, "<!-- campaign:end -->"',
    );
    const noEnd = page.replace('<!-- soak:end -->', '');
    expect(() => replaceDocsBlock(noEnd, 'soak', 'x')).toThrow(/no block soak/);
    // An end marker before the start marker is no block either.
    expect(() => replaceDocsBlock('<!-- a:end -->\n<!-- a:start -->\n', 'a', 'x')).toThrow(/no block a/);
  });
});

describe('writeDocsBlock', () => {
  it('rewrites the block of a markdown file and formats it as prettier --check wants', () => {
    const dir = mkdtempSync(join(tmpdir(), 'docs-block-'));
    try {
      const file = join(dir, 'page.md');
      writeFileSync(file, page);
      writeDocsBlock(file, 'soak', '| a | bb |\n| - | -: |\n| 1 | 2 |');
      const text = readFileSync(file, 'utf8');
      expect(text).toContain('<!-- soak:start -->\n\n| a   |  bb |\n| --- | --: |\n| 1   |   2 |\n\n<!-- soak:end -->');
      expect(text).toContain('old figures');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
