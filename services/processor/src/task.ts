import type { EntityDomain } from '@state-relay/accounts';
import {
  decodeCommand,
  decodeEvent,
  deadLetterRecord,
  encodeCommandResult,
  encodeStoredEntity,
  isDecodeError,
  type CommandResult,
  type StoredEntity,
} from '@state-relay/contracts';
import { TaskStore, WriteCache, readThrough } from '@state-relay/store';
import type { KafkaMessage, Message, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { aggregate, type AggregateInput } from './aggregate';
import type { ProcessorMetrics } from './metrics';

export interface TaskTopics {
  events: string;
  commands: string;
  results: string;
  deadLetter: string;
  changelog: string;
}

export interface InputBatch {
  topic: string;
  partition: number;
  messages: KafkaMessage[];
  /** Offset of the last record of the batch (markers included), as kafkajs reports it. */
  lastOffset: string;
}

export interface BatchOutcome {
  records: number;
  changes: number;
  results: number;
  deadLetters: number;
  /** When the batch's transaction committed (epoch ms). */
  committedAt: number;
}

/**
 * One task: partition p of the events and commands topics, its SQLite store, and its
 * transactional producer `<app>-<p>`. Batches run one at a time; each is one Kafka
 * transaction carrying changelog records, command results, dead letters and the consumed
 * offsets. The write cache reaches SQLite only after that transaction commits.
 */
export class Task {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    readonly id: number,
    private readonly store: TaskStore,
    private readonly producer: Producer,
    private readonly deps: {
      domain: EntityDomain;
      topics: TaskTopics;
      groupId: string;
      logger: Logger;
      metrics: ProcessorMetrics;
      now?: () => number;
    },
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** Reads the committed state of one entity (never the uncommitted write cache). */
  read(key: string): StoredEntity | undefined {
    return this.store.get(key);
  }

  /** Runs `fn` after every earlier batch of this task: the task's two inputs may arrive concurrently. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  async process(batch: InputBatch): Promise<BatchOutcome> {
    const now = this.deps.now ?? Date.now;
    const { topics, metrics } = this.deps;
    const cache = new WriteCache();
    const results: Message[] = [];
    const deadLetters: Message[] = [];
    const isCommand = batch.topic === topics.commands;
    const eventOutcomes = { changed: 0, unchanged: 0, dead_letter: 0 };
    const commandOutcomes = new Map<string, number>();

    for (const m of batch.messages) {
      const source = { topic: batch.topic, partition: batch.partition, offset: m.offset, key: m.key, value: m.value, headers: m.headers };
      let input: AggregateInput;
      let key: string;
      try {
        if (isCommand) {
          const command = decodeCommand(m.key, m.value);
          input = { kind: 'command', command };
          key = command.key;
        } else {
          const event = decodeEvent(m.key, m.value);
          const reason = this.deps.domain.validateEvent(event);
          if (reason) {
            deadLetters.push(deadLetterRecord(source, { code: 'EVENT_INVALID', reason }, now()));
            eventOutcomes.dead_letter++;
            continue;
          }
          input = { kind: 'event', event };
          key = m.key!.toString('utf8');
        }
      } catch (err) {
        if (!isDecodeError(err)) throw err;
        deadLetters.push(deadLetterRecord(source, { code: err.code, reason: err.reason }, now()));
        if (isCommand) commandOutcomes.set('dead_letter', (commandOutcomes.get('dead_letter') ?? 0) + 1);
        else eventOutcomes.dead_letter++;
        continue;
      }

      const { next, verdict } = aggregate(this.deps.domain, key, input, readThrough(cache, this.store, key));
      if (next === null) cache.delete(key);
      else if (next !== undefined) cache.put(key, next);
      if (input.kind === 'command' && verdict) {
        const result: CommandResult = {
          commandId: input.command.commandId,
          scanId: input.command.scanId,
          key,
          outcome: verdict.outcome,
          ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}),
          ...(verdict.version !== undefined ? { version: verdict.version } : {}),
          processedAt: now(),
        };
        results.push({ key: m.key, value: encodeCommandResult(result) });
        commandOutcomes.set(verdict.outcome, (commandOutcomes.get(verdict.outcome) ?? 0) + 1);
      } else if (input.kind === 'event') {
        if (next === undefined) eventOutcomes.unchanged++;
        else eventOutcomes.changed++;
      }
    }

    const { changes, committedAt } = await this.commitTransaction(cache, results, deadLetters, batch);

    for (const [outcome, n] of Object.entries(eventOutcomes)) if (n > 0) metrics.events.inc({ outcome }, n);
    for (const [outcome, n] of commandOutcomes) metrics.commands.inc({ outcome }, n);
    for (const m of batch.messages) metrics.commitLatencySeconds.observe(Math.max(0, committedAt - Number(m.timestamp)) / 1000);
    return {
      records: batch.messages.length,
      changes,
      results: results.length,
      deadLetters: deadLetters.length,
      committedAt,
    };
  }

  /**
   * Benchmark-only (the in-loop sweep of in-loop-sweep.ts, a punctuator): inputs generated
   * inside the task go through the same aggregate path and one transaction of their own,
   * which carries only changelog records (nothing was consumed). Call it inside exclusive().
   */
  async applyGenerated(inputs: Iterable<[string, AggregateInput]>): Promise<{ changes: number; committedAt: number }> {
    const cache = new WriteCache();
    for (const [key, input] of inputs) {
      const { next } = aggregate(this.deps.domain, key, input, readThrough(cache, this.store, key));
      if (next === null) cache.delete(key);
      else if (next !== undefined) cache.put(key, next);
    }
    if (cache.size === 0) return { changes: 0, committedAt: (this.deps.now ?? Date.now)() };
    return this.commitTransaction(cache, [], []);
  }

  /** Committed entities after `afterKey` in key order (for the benchmark-only in-loop sweep). */
  keysAfter(afterKey: string | null, limit: number): Array<[string, StoredEntity]> {
    return this.store.keysAfter(afterKey, limit);
  }

  /**
   * One Kafka transaction: the cache's changes to the changelog, results, dead letters and,
   * when records were consumed, their offsets; then the flush of the cache to SQLite.
   */
  private async commitTransaction(
    cache: WriteCache,
    results: Message[],
    deadLetters: Message[],
    consumed?: Pick<InputBatch, 'topic' | 'partition' | 'lastOffset'>,
  ): Promise<{ changes: number; committedAt: number }> {
    const now = this.deps.now ?? Date.now;
    const { topics } = this.deps;
    // The changelog gets the last value per key of this batch (coalesced, like Kafka
    // Streams' record cache), always on the task's own partition.
    const changes = [...cache.entries()];
    const changelog: Message[] = changes.map(([key, entity]) => ({
      key,
      value: entity ? encodeStoredEntity(entity) : null,
      partition: this.id,
    }));
    const topicMessages = [
      ...(changelog.length ? [{ topic: topics.changelog, messages: changelog }] : []),
      ...(results.length ? [{ topic: topics.results, messages: results }] : []),
      ...(deadLetters.length ? [{ topic: topics.deadLetter, messages: deadLetters }] : []),
    ];

    const tx = await this.producer.transaction();
    let checkpoint: string | null = null;
    try {
      // kafkajs does not split a request into record batches the broker accepts
      // (max.message.bytes, 1 MB by default): send a big batch's records in slices.
      for (const slice of slicesOf(topicMessages, MAX_REQUEST_BYTES)) {
        const sent = await tx.sendBatch({ topicMessages: slice });
        const meta = sent.find((r) => r.topicName === topics.changelog && r.partition === this.id);
        const count = slice.find((t) => t.topic === topics.changelog)?.messages.length ?? 0;
        if (meta?.baseOffset !== undefined) checkpoint = (BigInt(meta.baseOffset) + BigInt(count)).toString();
      }
      if (consumed) {
        await tx.sendOffsets({
          consumerGroupId: this.deps.groupId,
          topics: [
            {
              topic: consumed.topic,
              partitions: [{ partition: consumed.partition, offset: (BigInt(consumed.lastOffset) + 1n).toString() }],
            },
          ],
        });
      }
      await tx.commit();
    } catch (err) {
      await tx.abort().catch(() => undefined);
      throw err;
    }
    const committedAt = now();

    // Committed in Kafka: now make SQLite reflect it. A crash right here is repaired by
    // restore, which replays the changelog from the previous checkpoint.
    if (changes.length > 0) this.store.commit(changes, checkpoint ?? this.store.checkpoint() ?? '0');
    return { changes: changes.length, committedAt };
  }

  refreshStoreMetrics(): void {
    if (this.closed) return;
    this.deps.metrics.storeEntities.set({ task: String(this.id) }, this.store.count());
    this.deps.metrics.storeBytes.set({ task: String(this.id) }, this.store.sizeBytes());
  }

  /** Waits for the running batch, then releases the producer and the store. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.exclusive(async () => undefined).catch(() => undefined);
    this.closed = true;
    await this.producer.disconnect().catch((err: unknown) => this.deps.logger.warn({ err, task: this.id }, 'producer disconnect failed'));
    this.store.close();
    this.deps.metrics.storeEntities.remove({ task: String(this.id) });
    this.deps.metrics.storeBytes.remove({ task: String(this.id) });
  }
}

/** Bytes of keys and values per produce request: well under the broker's default max.message.bytes. */
const MAX_REQUEST_BYTES = 512 * 1024;

type TopicMessages = { topic: string; messages: Message[] };

/** Splits topic messages, in order, into requests of at most `maxBytes` (a bigger record goes alone). */
function* slicesOf(topicMessages: TopicMessages[], maxBytes: number): Generator<TopicMessages[]> {
  let slice: TopicMessages[] = [];
  let bytes = 0;
  for (const { topic, messages } of topicMessages) {
    for (const m of messages) {
      const size = byteLength(m.key) + byteLength(m.value) + 64;
      if (bytes + size > maxBytes && bytes > 0) {
        yield slice;
        slice = [];
        bytes = 0;
      }
      const last = slice[slice.length - 1];
      if (last?.topic === topic) last.messages.push(m);
      else slice.push({ topic, messages: [m] });
      bytes += size;
    }
  }
  if (slice.length > 0) yield slice;
}

function byteLength(b: Message['key'] | Message['value']): number {
  if (b === null || b === undefined) return 0;
  return typeof b === 'string' ? Buffer.byteLength(b) : b.length;
}
