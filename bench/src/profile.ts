import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export interface ProfileSummary {
  /** Share of sampled time by where the code lives. */
  byArea: Array<{ area: string; percent: number }>;
  /** Functions with the most self time. */
  topFunctions: Array<{ fn: string; percent: number }>;
}

/** Self time of a --cpu-prof profile, grouped by area (kafkajs, SQLite, our code, GC, idle...). */
export function summarizeProfile(dir: string): ProfileSummary | undefined {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return undefined;
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: ProfileNode[] };
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    const area = areaOf(functionName, url);
    areas.set(area, (areas.get(area) ?? 0) + hits);
    const name = `${functionName || '(anonymous)'} ${shortUrl(url)}${url ? `:${lineNumber + 1}` : ''}`.trim();
    fns.set(name, (fns.get(name) ?? 0) + hits);
  }
  const pct = (n: number) => Math.round((1000 * n) / total) / 10;
  return {
    byArea: [...areas].sort((a, b) => b[1] - a[1]).map(([area, n]) => ({ area, percent: pct(n) })),
    topFunctions: [...fns]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([fn, n]) => ({ fn, percent: pct(n) })),
  };
}

function areaOf(fn: string, url: string): string {
  if (fn === '(idle)') return 'idle (waiting for the broker)';
  if (fn === '(garbage collector)') return 'garbage collection';
  if (url.includes('kafkajs')) return 'kafkajs (protocol encoding/decoding, CRC, batching)';
  // better-sqlite3's native calls are counted in the TaskStore function that makes them.
  if (/better-sqlite3|task-store\.js|replica-store\.js|sqlite-file\.js/.test(url))
    return 'SQLite (TaskStore reads and writes)';
  if (/contracts\/dist\/(json|fields|changelog|events|commands|results)\.js|store\/dist\/codec\.js/.test(url)) {
    return 'JSON decode/encode and validation (contracts, store codec)';
  }
  if (url.includes('pino') || url.includes('prom-client')) return 'logging and metrics';
  if (url.includes('/packages/') || url.includes('/services/'))
    return 'state-relay code (aggregate, fold, task, restore)';
  if (
    /^(wrapSafe|compileFunction|compileFunctionForCJSLoader|internalModuleStat|internalModuleReadJSON|readFileUtf8|Module\._load|dlopen)$/.test(
      fn,
    )
  ) {
    return 'module loading (process start)';
  }
  if (url.startsWith('node:') || !url) return 'Node.js and V8 internals (buffers, streams, timers)';
  return 'other';
}

function shortUrl(url: string): string {
  const m = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?(.*)$/.exec(url);
  return m ? m[1]! : url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
}
