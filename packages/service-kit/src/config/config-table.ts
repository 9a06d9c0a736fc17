import type { TObject, TSchema } from '@sinclair/typebox';

/** One documented variable: its name and its default as the README writes it (undefined: none). */
export interface DocumentedVariable {
  name: string;
  default: string | undefined;
}

/**
 * The variables of the first markdown table whose first column is "variable". A row may name
 * several (`HTTP_HOST`, `HTTP_PORT`) with as many defaults (`0.0.0.0`, `8080`); a default cell
 * without backticks ("required", "(required unless …)") documents no default.
 */
export function readConfigTable(markdown: string): DocumentedVariable[] {
  const lines = markdown.split('\n');
  const header = lines.findIndex((line) => /^\|\s*variable\s*\|/.test(line));
  if (header < 0) return [];
  const documented: DocumentedVariable[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [names = '', defaults = ''] = line
      .split('|')
      .slice(1)
      .map((cell) => cell.trim());
    const values = defaults.startsWith('`') ? backticked(defaults) : [];
    backticked(names).forEach((name, i) => documented.push({ name, default: values[i] }));
  }
  return documented;
}

/**
 * Where a README's configuration table and the schema disagree: a variable only one of them
 * has, or a different default. Empty when they agree.
 */
export function configTableDrift(schema: TObject, markdown: string): string[] {
  const documented = readConfigTable(markdown);
  const drift: string[] = [];
  if (documented.length === 0) return ['the README has no table whose first column is "variable"'];
  for (const { name, default: readme } of documented) {
    const variable = schema.properties[name] as TSchema | undefined;
    if (variable === undefined) {
      drift.push(`${name} is documented but not in the schema`);
      continue;
    }
    const actual = variable.default === undefined ? undefined : String(variable.default);
    if (actual !== readme) drift.push(`${name}: the README says ${show(readme)}, the schema ${show(actual)}`);
  }
  for (const name of Object.keys(schema.properties)) {
    if (!documented.some((d) => d.name === name)) drift.push(`${name} is in the schema but not documented`);
  }
  return drift;
}

function backticked(cell: string): string[] {
  return [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
}

function show(value: string | undefined): string {
  return value === undefined ? 'no default' : `\`${value}\``;
}
