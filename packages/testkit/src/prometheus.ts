/** The sum of a Prometheus text exposition's samples of `name` whose labels contain `labels` (e.g. `kind="fenced"`). */
export function metricSum(text: string, name: string, labels = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || !/[{ ]/.test(line.charAt(name.length)) || (labels && !line.includes(labels)))
      continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}
