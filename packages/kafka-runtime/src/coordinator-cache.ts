import type { Kafka } from 'kafkajs';

/** What kafkajs's Cluster offers that the cache wraps (kafkajs 2.2.4, src/cluster/index.js). */
interface ClusterInternals {
  findGroupCoordinator(args: { groupId: string; coordinatorType?: number }): Promise<object>;
}

/** kafkajs keeps its cluster factory under this symbol (`PRIVATE.CREATE_CLUSTER` in src/index.js). */
const CREATE_CLUSTER = 'private:Kafka:createCluster';

/**
 * Creates a client with `create` (e.g. `() => kafka.producer(...)`) whose cluster remembers
 * coordinators for `ttlMs`. kafkajs looks the transaction coordinator up again (FindCoordinator)
 * before AddPartitionsToTxn, AddOffsetsToTxn and EndTxn, and the group coordinator before
 * TxnOffsetCommit: four extra round trips per transaction; the Java client makes none. An entry
 * is dropped when a request to that coordinator fails (kafkajs retries and looks it up again)
 * and after `ttlMs`; a task's failure replaces its producer, and with it the cache. Where
 * kafkajs's internals are not as expected, the client is created unchanged.
 */
export function withCoordinatorCache<T>(kafka: Kafka, ttlMs: number, create: () => T): T {
  const holder = kafka as unknown as Record<symbol, (options: unknown) => unknown>;
  const key = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER);
  const original = key ? holder[key] : undefined;
  if (!key || typeof original !== 'function') return create();
  holder[key] = (options: unknown) => {
    const cluster = original(options) as Partial<ClusterInternals>;
    if (typeof cluster.findGroupCoordinator === 'function') cacheCoordinators(cluster as ClusterInternals, ttlMs);
    return cluster;
  };
  try {
    return create();
  } finally {
    holder[key] = original;
  }
}

function cacheCoordinators(cluster: ClusterInternals, ttlMs: number): void {
  const find = cluster.findGroupCoordinator.bind(cluster);
  const cache = new Map<string, { at: number; broker: object }>();
  cluster.findGroupCoordinator = async (args) => {
    const entry = `${args.coordinatorType ?? 0}/${args.groupId}`;
    const hit = cache.get(entry);
    if (hit && Date.now() - hit.at < ttlMs) return hit.broker;
    const broker = forgetOnError(await find(args), () => {
      if (cache.get(entry)?.broker === broker) cache.delete(entry);
    });
    cache.set(entry, { at: Date.now(), broker });
    return broker;
  };
}

/**
 * The coordinator's broker, whose failed requests drop it from the cache: NOT_COORDINATOR, a
 * coordinator still loading, a lost connection — kafkajs then retries and looks it up again.
 * CONCURRENT_TRANSACTIONS (the previous transaction still completing) says nothing about it.
 */
function forgetOnError(broker: object, forget: () => void): object {
  const keep = (err: unknown) => (err as { type?: unknown } | undefined)?.type === 'CONCURRENT_TRANSACTIONS';
  return new Proxy(broker, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          const result: unknown = value.apply(target, args);
          if (result instanceof Promise) {
            return result.catch((err: unknown) => {
              if (!keep(err)) forget();
              throw err;
            });
          }
          return result;
        } catch (err) {
          if (!keep(err)) forget();
          throw err;
        }
      };
    },
  });
}
