import type { EntityDomain } from '@state-relay/accounts';
import { decodeStoredEntity, type StoredEntity } from '@state-relay/contracts';
import { connectTaskProducer, endOffsets, restoreChangelog } from '@state-relay/kafka-runtime';
import { TaskStore } from '@state-relay/store';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { ProcessorMetrics } from './metrics';
import { Task, type TaskTopics } from './task';

export interface TaskRegistryDeps {
  kafka: Kafka;
  appId: string;
  groupId: string;
  stateDir: string;
  topics: TaskTopics;
  domain: EntityDomain;
  logger: Logger;
  metrics: ProcessorMetrics;
  transactionTimeoutMs: number;
}

/**
 * The tasks this instance owns. A task becomes usable only after its producer is connected
 * (fencing any previous owner) and its store is restored from the changelog to the end.
 */
export class TaskRegistry {
  private readonly tasks = new Map<number, Promise<Task>>();
  private restoring = 0;

  constructor(private readonly deps: TaskRegistryDeps) {}

  /** True while any owned task is still restoring. */
  get isRestoring(): boolean {
    return this.restoring > 0;
  }

  get owned(): number[] {
    return [...this.tasks.keys()].sort((a, b) => a - b);
  }

  /** The task, prepared (and restored) if this is the first time it is asked for. */
  acquire(id: number): Promise<Task> {
    const existing = this.tasks.get(id);
    if (existing) return existing;
    const ready = this.prepare([id]).then((m) => m.get(id)!);
    this.tasks.set(id, ready);
    ready.catch(() => this.tasks.delete(id));
    return ready;
  }

  /** Makes the owned set equal `ids`: closes the others, prepares the new ones together. */
  async assign(ids: number[]): Promise<void> {
    const wanted = new Set(ids);
    await Promise.all([...this.tasks.keys()].filter((id) => !wanted.has(id)).map((id) => this.release(id)));
    const fresh = ids.filter((id) => !this.tasks.has(id));
    if (fresh.length === 0) return;
    const prepared = this.prepare(fresh);
    for (const id of fresh) {
      const ready = prepared.then((m) => m.get(id)!);
      this.tasks.set(id, ready);
      ready.catch(() => this.tasks.delete(id));
    }
    await prepared;
    this.deps.metrics.tasksOwned.set(this.tasks.size);
  }

  /** Drops a task (revoked, or its producer failed): the next acquire prepares it again. */
  async release(id: number): Promise<void> {
    const task = this.tasks.get(id);
    this.tasks.delete(id);
    this.deps.metrics.tasksOwned.set(this.tasks.size);
    if (!task) return;
    const t = await task.catch(() => undefined);
    await t?.close();
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.tasks.keys()].map((id) => this.release(id)));
  }

  /** Reads one entity from whichever owned task holds it (committed state only). */
  async read(key: string): Promise<{ task: number; entity: StoredEntity } | undefined> {
    for (const [id, pending] of this.tasks) {
      const task = await pending.catch(() => undefined);
      const entity = task && !task.isClosed ? task.read(key) : undefined;
      if (entity) return { task: id, entity };
    }
    return undefined;
  }

  async forEachReady(fn: (task: Task) => void): Promise<void> {
    for (const pending of this.tasks.values()) {
      const task = await pending.catch(() => undefined);
      if (task && !task.isClosed) fn(task);
    }
  }

  private async prepare(ids: number[]): Promise<Map<number, Task>> {
    const { kafka, appId, topics, logger, metrics } = this.deps;
    this.restoring++;
    const stores = new Map<number, TaskStore>();
    const tasks = new Map<number, Task>();
    try {
      for (const id of ids) stores.set(id, TaskStore.open({ dir: this.deps.stateDir, task: id }));
      // Fence earlier owners first: their open transactions are aborted before we read the end.
      const producers = await Promise.all(
        ids.map((task) =>
          connectTaskProducer({ kafka, appId, task, transactionTimeoutMs: this.deps.transactionTimeoutMs }),
        ),
      );
      ids.forEach((id, i) => tasks.set(id, new Task(id, stores.get(id)!, producers[i]!, this.deps)));

      const admin = kafka.admin();
      await admin.connect();
      const ends = await endOffsets(admin, topics.changelog).finally(() => admin.disconnect());
      const from = new Map<number, bigint | null>();
      for (const [id, store] of stores) {
        const checkpoint = store.checkpoint();
        const end = ends.get(id) ?? 0n;
        if (checkpoint !== null && BigInt(checkpoint) > end) {
          // The store is ahead of its changelog: the topic was recreated. Trust the changelog.
          logger.warn(
            { task: id, checkpoint, end },
            'store checkpoint is past the changelog end; rebuilding the store',
          );
          store.wipe();
          from.set(id, null);
        } else {
          from.set(id, checkpoint === null ? null : BigInt(checkpoint));
        }
      }
      const started = Date.now();
      let last = 0;
      const summary = await restoreChangelog({
        kafka,
        topic: topics.changelog,
        from,
        groupPrefix: `${appId}-restore`,
        apply: (partition, records, next) => {
          const changes: Array<[string, StoredEntity | null]> = records.map((r) => [
            r.key!.toString('utf8'),
            decodeStoredEntity(r.key, r.value),
          ]);
          stores.get(partition)!.commit(changes, next.toString());
        },
        onProgress: (restored, total) => {
          metrics.restoredRecords.inc(restored - last);
          metrics.restoreRemaining.set(total - restored);
          last = restored;
        },
      });
      metrics.restoreRemaining.set(0);
      logger.info(
        { tasks: ids, records: summary.records, ms: Date.now() - started },
        summary.records > 0 ? 'tasks restored from the changelog' : 'tasks ready (stores were up to date)',
      );
      for (const task of tasks.values()) task.refreshStoreMetrics();
      return tasks;
    } catch (err) {
      for (const task of tasks.values()) await task.close().catch(() => undefined);
      for (const [id, store] of stores) if (!tasks.has(id)) store.close();
      throw err;
    } finally {
      this.restoring--;
    }
  }
}
