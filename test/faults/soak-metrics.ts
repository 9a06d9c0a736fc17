import { getContainerRuntimeClient } from 'testcontainers';
import type { Admin } from 'kafkajs';
import type { ScenarioContext } from './scenario';
import type { ServiceNode } from './stack';

// What the soak samples, every few seconds: each process's resident memory, the processors'
// event commit latency (p50/p99 of the window, from their Prometheus histogram), and the
// processor group's committed rate of events and commands (from its committed offsets, so it
// counts the same across instances coming and going).

/** Cumulative bucket counts of a Prometheus histogram, by upper bound (Infinity for +Inf). */
export type Buckets = Map<number, number>;

export function histogram(text: string, name: string): Buckets {
  const out: Buckets = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    out.set(bound, (out.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/** `now - before` per bucket; a process that restarted (counts went down) counts from zero. */
export function bucketDelta(now: Buckets, before: Buckets | undefined): Buckets {
  const reset = [...now].some(([b, n]) => n < (before?.get(b) ?? 0));
  return new Map([...now].map(([b, n]) => [b, reset ? n : n - (before?.get(b) ?? 0)]));
}

export function addBuckets(into: Buckets, more: Buckets): void {
  for (const [b, n] of more) into.set(b, (into.get(b) ?? 0) + n);
}

/**
 * The q-quantile of a window's buckets, interpolated linearly inside its bucket as Prometheus'
 * histogram_quantile does; null without observations. Above the last finite bound it says that bound.
 */
export function quantileOf(buckets: Buckets, q: number): number | null {
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  const total = buckets.get(Infinity) ?? buckets.get(bounds[bounds.length - 1]!) ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const bound of bounds) {
    const count = buckets.get(bound)!;
    if (count >= rank) {
      if (bound === Infinity) return lower;
      return lower + ((bound - lower) * (rank - below)) / Math.max(1, count - below);
    }
    lower = bound;
    below = count;
  }
  return lower;
}

/** Resident memory from the service's /metrics: prom-client's default metric, with or without a service prefix. */
export async function residentMiB(node: ServiceNode): Promise<number | null> {
  const text = await node.metrics().catch(() => '');
  const line = text.split('\n').find((l) => /^([a-z]+_)?process_resident_memory_bytes(\{[^}]*\})? /.test(l));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) / 2 ** 20 : null;
}

/** A container's memory use as the runtime accounts it (the broker: a JVM, no /metrics). */
export async function containerMiB(id: string): Promise<number | null> {
  try {
    const client = await getContainerRuntimeClient();
    const stats = (await client.container.getById(id).stats({ stream: false })) as {
      memory_stats?: { usage?: number };
    };
    return stats.memory_stats?.usage ? stats.memory_stats.usage / 2 ** 20 : null;
  } catch {
    return null;
  }
}

/** The processor group's committed offsets summed over a topic's partitions, and the topic's end. */
export async function groupPosition(
  ctx: ScenarioContext,
  admin: Admin,
  topic: string,
): Promise<{ committed: number; end: number }> {
  const [offsets] = await admin.fetchOffsets({ groupId: ctx.d.appId, topics: [topic] });
  const ends = await admin.fetchTopicOffsets(topic);
  return {
    committed: offsets!.partitions.reduce((n, p) => n + Math.max(0, Number(p.offset)), 0),
    end: ends.reduce((n, p) => n + Number(p.high), 0),
  };
}
