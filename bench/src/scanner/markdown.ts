/** A markdown table with padded columns (as prettier writes it). */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(3, ...rows.map((row) => row[c]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
  return [line(rows[0]!), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.slice(1).map(line)].join('\n');
}
