import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { FLAGS, NOUNS } from '../src/cli/commands';
import { EXIT } from '../src/cli/exit-codes';

// The README's "CLI" section is the CLI's contract: every exit code, command and flag is in it.

const readme = readFileSync(resolve(__dirname, '../README.md'), 'utf8');
const section = /\n## CLI\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';

describe('the scanner README documents the CLI', () => {
  it('has a CLI section', () => {
    expect(section.length).toBeGreaterThan(1_000);
  });

  it('its exit code table is exactly the exit codes', () => {
    const documented = [...section.matchAll(/^\| (\d+) +\|/gm)].map((m) => Number(m[1]));
    expect(documented).toEqual(Object.values(EXIT).sort((a, b) => a - b));
  });

  it('names every command and every flag', () => {
    for (const [noun, verbs] of Object.entries(NOUNS)) {
      for (const [verb, spec] of Object.entries(verbs)) {
        expect(section).toContain(`| \`${[noun, verb, ...spec.args].join(' ')}\``);
      }
    }
    for (const flag of Object.keys(FLAGS)) expect(section).toMatch(new RegExp(`\`--${flag}[ \`]`));
  });

  it('names the environment variables the CLI reads', () => {
    expect(section).toContain('| `STATE_RELAY_API_TOKEN` |');
    expect(section).toContain('| `STATE_RELAY_URL`       |');
  });
});
