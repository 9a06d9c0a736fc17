import type { Kafka } from 'kafkajs';
import { KafkajsShapeError } from './errors';
import { kafkaErrorType, withCoordinatorLookup, type FindCoordinator } from './kafkajs';

/**
 * Creates a client with `create` (e.g. `() => kafka.producer(...)`) whose cluster remembers
 * coordinators for `ttlMs`, sparing kafkajs's FindCoordinator before each transactional request
 * (see DECISIONS.md, 'Task producers remember their coordinators'). An entry is dropped when a
 * request to it fails, and after `ttlMs`. Where kafkajs's internals are not as expected, the
 * client is created unchanged.
 */
export function withCoordinatorCache<T>(kafka: Kafka, ttlMs: number, create: () => T): T {
  try {
    return withCoordinatorLookup(kafka, (find) => cachedCoordinators(find, ttlMs), create);
  } catch (err) {
    if (err instanceof KafkajsShapeError) return create();
    throw err;
  }
}

function cachedCoordinators(find: FindCoordinator, ttlMs: number): FindCoordinator {
  const cache = new Map<string, { at: number; broker: object }>();
  return async (args) => {
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
  const keep = (err: unknown) => kafkaErrorType(err) === 'CONCURRENT_TRANSACTIONS';
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
