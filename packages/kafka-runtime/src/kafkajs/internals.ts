import { Kafka } from 'kafkajs';
import { KafkajsShapeError } from '../errors';
import { assertSupportedKafkajs } from './version';

/** kafkajs keeps each client's cluster factory under this symbol (`PRIVATE.CREATE_CLUSTER` in src/index.js). */
export const CREATE_CLUSTER_SYMBOL = 'private:Kafka:createCluster';

export type ClusterFactory = (options: object) => unknown;

/** The cluster factory of `kafka` and the symbol it sits under; KafkajsShapeError when it is not there. */
export function clusterFactoryOf(kafka: Kafka): { key: symbol; factory: ClusterFactory } {
  assertSupportedKafkajs();
  const key = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER_SYMBOL);
  const factory = key ? (kafka as unknown as Record<symbol, unknown>)[key] : undefined;
  if (!key || typeof factory !== 'function') throw new KafkajsShapeError(`the Kafka client's ${CREATE_CLUSTER_SYMBOL}`);
  return { key, factory: factory as ClusterFactory };
}

/** `target` as a T once each of `methods` is a function on it; KafkajsShapeError naming the first that is not. */
export function withMethods<T>(target: unknown, what: string, methods: readonly (keyof T & string)[]): T {
  for (const method of methods) {
    if (typeof (target as Record<string, unknown> | null | undefined)?.[method] !== 'function') {
      throw new KafkajsShapeError(`${what}.${method}`);
    }
  }
  return target as T;
}

/** kafkajs's Cluster.findGroupCoordinator (src/cluster/index.js): the group or transaction coordinator's broker. */
export type FindCoordinator = (args: { groupId: string; coordinatorType?: number }) => Promise<object>;

/**
 * Runs `create` (one client made from `kafka`, e.g. `() => kafka.producer(...)`) so that the
 * Cluster kafkajs makes for it looks coordinators up through `wrap(find)`. kafkajs has no hook for
 * this: its cluster factory is swapped for the duration of `create`.
 */
export function withCoordinatorLookup<T>(
  kafka: Kafka,
  wrap: (find: FindCoordinator) => FindCoordinator,
  create: () => T,
): T {
  const { key, factory } = clusterFactoryOf(kafka);
  const holder = kafka as unknown as Record<symbol, ClusterFactory>;
  holder[key] = (options) => {
    const cluster = withMethods<{ findGroupCoordinator: FindCoordinator }>(factory(options), 'Cluster', [
      'findGroupCoordinator',
    ]);
    cluster.findGroupCoordinator = wrap(cluster.findGroupCoordinator.bind(cluster));
    return cluster;
  };
  try {
    return create();
  } finally {
    holder[key] = factory;
  }
}

/** kafkajs's Cluster.addMultipleTargetTopics (src/cluster/index.js): fetches and keeps metadata for `topics`. */
export type AddTargetTopics = (topics: string[]) => Promise<void>;

/**
 * Runs `create` (one client made from `kafka`) and hands back, with the client, its Cluster's
 * addMultipleTargetTopics: a producer fetches a topic's metadata lazily, at its first send to it
 * (a Metadata request inside the first transaction that sends there); this fetches it up front.
 * KafkajsShapeError when the factory or the method is not there (before `create` runs).
 */
export function withTargetTopics<T>(kafka: Kafka, create: () => T): { client: T; addTargetTopics: AddTargetTopics } {
  const { key, factory } = clusterFactoryOf(kafka);
  const holder = kafka as unknown as Record<symbol, ClusterFactory>;
  let cluster: { addMultipleTargetTopics: AddTargetTopics } | undefined;
  holder[key] = (options) => {
    const made = factory(options);
    cluster = withMethods<{ addMultipleTargetTopics: AddTargetTopics }>(made, 'Cluster', ['addMultipleTargetTopics']);
    return made;
  };
  let client: T;
  try {
    client = create();
  } finally {
    holder[key] = factory;
  }
  const made = cluster;
  if (!made) throw new KafkajsShapeError('a Cluster made by the client');
  return { client, addTargetTopics: (topics) => made.addMultipleTargetTopics(topics) };
}

type ClientMethod = 'producer' | 'consumer';
type ClientConfig<M extends ClientMethod> = Parameters<Kafka[M]>[0];
type Client<M extends ClientMethod> = ReturnType<Kafka[M]>;

/**
 * Makes every Kafka client of this process create its producers (or consumers) through
 * `intercept`, which calls `create` for the client kafkajs would have made; returns the undo.
 * kafkajs has no hook for this, so it replaces `Kafka.prototype[method]`: instrumentation only
 * (the benchmark), never production code.
 */
export function interceptClientCreation<M extends ClientMethod>(
  method: M,
  intercept: (config: ClientConfig<M>, create: (config: ClientConfig<M>) => Client<M>) => Client<M>,
): () => void {
  assertSupportedKafkajs();
  const prototype = Kafka.prototype as unknown as Record<M, (this: Kafka, config: ClientConfig<M>) => Client<M>>;
  const original = prototype[method];
  if (typeof original !== 'function') throw new KafkajsShapeError(`Kafka.prototype.${method}`);
  prototype[method] = function (this: Kafka, config: ClientConfig<M>) {
    return intercept(config, (c) => original.call(this, c));
  };
  return () => {
    prototype[method] = original;
  };
}
