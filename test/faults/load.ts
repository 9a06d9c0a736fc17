import type { KeyedEvent } from '@state-relay/domain';
import { applyAccountEvent, DORMANCY_SWEEP, validateAccountEvent } from '@state-relay/accounts';
import { generateAccountEvents, mulberry32 } from '@state-relay/accounts/testing';
import { decodeEvent, encodeEvent, type DomainEvent } from '@state-relay/contracts';
import { evaluateCondition, type JsonObject } from '@state-relay/rules';
import { readTopic } from '@state-relay/testkit';
import type { Kafka, Producer } from 'kafkajs';

const DAY = 24 * 60 * 60 * 1000;
/** The scan's asOf and the generator's "now": fixed, so the matching set is known in advance. */
export const AS_OF = Date.UTC(2026, 9, 1);

/** A small PRNG (mulberry32), so a seed replays the same load. */
export const prng = mulberry32;

export interface Seeded {
  events: KeyedEvent[];
  /** Accounts the sweep will mark dormant: nothing else touches them. */
  matching: string[];
  /** Accounts that cannot match the sweep, whatever the load does to them. */
  others: string[];
}

/** The accounts seeded before the scan: 30% idle for over 30 days at AS_OF, the rest recently active. */
export function seedAccounts(accounts: number, eventsPerAccount: number, seed: number): Seeded {
  const events = generateAccountEvents({ accounts, eventsPerAccount, seed, now: AS_OF, dormantFraction: 0.3 });
  const state = foldWithVersions(events);
  const matching: string[] = [];
  const others: string[] = [];
  for (const [key, { value }] of state) {
    (evaluateCondition(DORMANCY_SWEEP.condition, value, { asOf: AS_OF }) ? matching : others).push(key);
  }
  return { events, matching: matching.sort(), others: others.sort() };
}

export interface LoadOptions {
  seed: number;
  perSecond: number;
  /** Events per send (default 10); a high rate needs bigger batches. */
  batch?: number;
  /** Producers sending side by side (default 1), each at its share of the rate: a high rate needs several. */
  producers?: number;
  /** New accounts (8% of events) unless false: a soak keeps its key set fixed. */
  signUps?: boolean;
  rememberIds?: boolean;
}

/**
 * Steady event load during a scan, on accounts that can never match the sweep: activity and
 * payments at recent times (lastActiveAt only grows), closures, and new sign-ups. A send that
 * fails after the producer's retries is counted; the oracle is computed from the events topic
 * itself, so an event whose fate is unknown to the producer is still accounted for.
 */
export class SteadyLoad {
  private readonly producers: Producer[] = [];
  private running?: Promise<unknown>;
  private stopped = false;
  private readonly random: () => number;
  private readonly keys: string[];
  private n = 0;
  private acknowledged = 0;
  /** The ids of the acknowledged events (unless `rememberIds` is false: a long soak). */
  readonly acknowledgedIds: string[] = [];
  failedSends = 0;

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
    others: readonly string[],
    private readonly options: LoadOptions,
  ) {
    this.random = prng(options.seed);
    this.keys = [...others];
  }

  get produced(): number {
    return this.acknowledged;
  }

  async start(): Promise<void> {
    const count = this.options.producers ?? 1;
    for (let i = 0; i < count; i++) this.producers.push(await this.connect());
    this.running = Promise.all(this.producers.map((_, i) => this.loop(i)));
  }

  private async connect(): Promise<Producer> {
    const producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      retry: { retries: 30, maxRetryTime: 3_000 },
    });
    await producer.connect();
    return producer;
  }

  private next(): KeyedEvent {
    const id = `load-${this.options.seed}-${this.n++}`;
    const r = this.random();
    const at = AS_OF - Math.floor(this.random() * 20 * DAY);
    if (r < 0.08 && this.options.signUps !== false) {
      const key = `load-${this.options.seed}-${String(this.n).padStart(7, '0')}`;
      this.keys.push(key);
      return { key, event: { type: 'signed_up', at, data: {}, id } };
    }
    const key = this.keys[Math.floor(this.random() * this.keys.length)]!;
    let event: DomainEvent;
    if (r >= 0.08 && r < 0.12) event = { type: 'closed', at, data: {}, id };
    else if (r < 0.4) event = { type: 'payment', at, data: { amount: Math.floor(this.random() * 20_000) - 5_000 }, id };
    else event = { type: 'activity', at, data: {}, id };
    return { key, event };
  }

  /** One producer's share of the rate, its sends one at a time (idempotent: one request in flight). */
  private async loop(slot: number): Promise<void> {
    const batch = this.options.batch ?? 10;
    const intervalMs = (1000 * batch * this.producers.length) / this.options.perSecond;
    while (!this.stopped) {
      const started = Date.now();
      const events = Array.from({ length: batch }, () => this.next());
      try {
        await this.producers[slot]!.send({
          topic: this.topic,
          messages: events.map(({ key, event }) => ({ key, value: encodeEvent(event) })),
        });
        this.acknowledged += events.length;
        if (this.options.rememberIds !== false) for (const e of events) this.acknowledgedIds.push(e.event.id!);
      } catch {
        this.failedSends++; // in the log or not: the oracle reads the log
        // An idempotent producer that gave up (e.g. across a broker restart) keeps failing: replace it.
        await this.producers[slot]!.disconnect().catch(() => undefined);
        this.producers[slot] = await this.connect().catch(() => this.producers[slot]!);
      }
      const wait = intervalMs - (Date.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    await Promise.all(this.producers.map((p) => p.disconnect().catch(() => undefined)));
  }
}

export async function produceAll(kafka: Kafka, topic: string, events: readonly KeyedEvent[]): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    for (let i = 0; i < events.length; i += 2000) {
      await producer.send({
        topic,
        messages: events.slice(i, i + 2000).map(({ key, event }) => ({ key, value: encodeEvent(event) })),
      });
    }
  } finally {
    await producer.disconnect();
  }
}

export interface Versioned {
  version: number;
  value: JsonObject;
}

/** The account fold with versions, as the processor's aggregate counts them: one per change. */
export function foldWithVersions(
  events: Iterable<KeyedEvent>,
  state = new Map<string, Versioned>(),
): Map<string, Versioned> {
  for (const { key, event } of events) {
    if (validateAccountEvent(event) !== null) continue;
    const current = state.get(key);
    const value = applyAccountEvent(key, event, current?.value);
    if (value === null) state.delete(key);
    else state.set(key, { version: (current?.version ?? 0) + 1, value });
  }
  return state;
}

/** Every event in the topic, in partition-then-offset order (per key, the order the processor saw). */
export async function eventsInLog(kafka: Kafka, topic: string): Promise<KeyedEvent[]> {
  return (await inputLog(kafka, topic)).events;
}

/**
 * The events topic as the processor reads it: the events it folds, in log order, and how many
 * records it must dead-letter instead (not decodable, or refused by the account domain).
 */
export async function inputLog(kafka: Kafka, topic: string): Promise<{ events: KeyedEvent[]; refused: number }> {
  const records = await readTopic(kafka, topic, { isolation: 'read_committed', timeoutMs: 120_000 });
  records.sort((a, b) => a.partition - b.partition || (BigInt(a.offset) < BigInt(b.offset) ? -1 : 1));
  const events: KeyedEvent[] = [];
  let refused = 0;
  for (const r of records) {
    let event: DomainEvent;
    try {
      event = decodeEvent(Buffer.from(r.key!), Buffer.from(r.value!));
    } catch {
      refused++;
      continue;
    }
    if (validateAccountEvent(event) !== null) refused++;
    else events.push({ key: r.key!, event });
  }
  return { events, refused };
}
