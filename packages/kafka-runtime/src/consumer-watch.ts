import type { Consumer } from 'kafkajs';
import { withDeadline } from './deadline';

/**
 * Why a consumer needs replacing: kafkajs gave up on it, it stopped making progress, or (found by
 * its owner, not by watchConsumer) the group no longer counts it as a member.
 */
export type ConsumerDeath = 'crashed' | 'stalled' | 'evicted';

export interface ConsumerWatchOptions {
  /**
   * No completed fetch, join or rebalance for this long means the consumer is hung.
   * Must exceed the longest legitimate pause: a join waits up to the rebalance timeout.
   */
  stallMs: number;
  /** How often the watch looks; default stallMs / 6. */
  checkEveryMs?: number;
  /** Called at most once per watch, then the watch stops. */
  onDead: (reason: ConsumerDeath, err?: Error) => void;
  now?: () => number;
}

export interface ConsumerWatch {
  stop(): void;
}

/**
 * Watches a kafkajs consumer for the ways it stops without coming back: a CRASH it will not
 * restart from, or no completed fetch (FETCH), join or rebalance for `stallMs`. Only a completed
 * fetch is a sign of life (see DECISIONS.md, 'A consumer is alive only while its fetches complete').
 * The owner replaces the consumer (a new one opens new connections); this only detects.
 */
export function watchConsumer(consumer: Consumer, options: ConsumerWatchOptions): ConsumerWatch {
  const now = options.now ?? Date.now;
  let lastSign = now();
  let done = false;
  const sign = () => {
    lastSign = now();
  };
  const listeners = [
    consumer.on(consumer.events.FETCH, sign),
    consumer.on(consumer.events.GROUP_JOIN, sign),
    consumer.on(consumer.events.REBALANCING, sign),
    consumer.on(consumer.events.CONNECT, sign),
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      // A crash kafkajs restarts from is no sign of life: it restarts on the same connections.
      if (!payload.restart) dead('crashed', payload.error);
    }),
  ];
  const timer = setInterval(
    () => {
      if (now() - lastSign >= options.stallMs) dead('stalled');
    },
    options.checkEveryMs ?? Math.max(100, Math.floor(options.stallMs / 6)),
  );
  timer.unref();

  function stop(): void {
    done = true;
    clearInterval(timer);
    for (const remove of listeners) remove();
  }
  function dead(reason: ConsumerDeath, err?: Error): void {
    if (done) return;
    stop();
    options.onDead(reason, err);
  }
  return { stop };
}

/** Back-off before the n-th consecutive replacement (n ≥ 1): 1 s doubling to 30 s, ±20 %. */
export function replacementDelayMs(n: number, random: () => number = Math.random): number {
  const base = Math.min(30_000, 1_000 * 2 ** Math.max(0, n - 1));
  return Math.round(base * (0.8 + random() * 0.4));
}

/**
 * kafkajs `retry` option for a consumer whose owner replaces it (watchConsumer + retireConsumer):
 * every crash is final (CRASH with restart: false). A restart kafkajs has begun cannot be stopped
 * by `disconnect()` and would come back as an orphan member holding its partitions
 * (see DECISIONS.md, 'kafkajs never restarts a consumer its owner replaces').
 */
export const OWNER_REPLACES = { restartOnFailure: async (): Promise<boolean> => false } as const;

/** How long retireConsumer waits for a run still joining before it disconnects anyway. */
export const RUN_SETTLE_MS = 180_000;

/**
 * Lets go of a dead consumer before its replacement starts: waits (at most `settleWithinMs`) for
 * a `consumer.run()` still joining to return, since a disconnect does not stop a join (see
 * OWNER_REPLACES); disconnects it (at most `disconnectWithinMs`: a hung consumer may never
 * finish); then waits the back-off of the `attempt`-th consecutive replacement.
 */
export async function retireConsumer(
  old: Consumer,
  attempt: number,
  disconnectWithinMs = 10_000,
  running?: Promise<unknown>,
  settleWithinMs = RUN_SETTLE_MS,
): Promise<void> {
  const settled = (p: Promise<unknown>) => p.catch(() => undefined);
  if (running) await withDeadline(settled(running), settleWithinMs, { fallback: undefined });
  await withDeadline(settled(old.disconnect()), disconnectWithinMs, { fallback: undefined });
  await new Promise((resolve) => setTimeout(resolve, replacementDelayMs(attempt)).unref());
}

export interface ReplacingConsumerOptions {
  /** Names it in log lines: "replica follower". */
  what: string;
  /** See ConsumerWatchOptions.stallMs. */
  stallMs: number;
  /** A new consumer with its event listeners; not yet connected. */
  create: () => Consumer;
  /** Connects and subscribes it before `run`, if `run` does not; a retirement does not wait for this part. */
  connect?: (consumer: Consumer) => Promise<void>;
  /** Runs it (`consumer.run`), connecting first unless `connect` does; a retirement waits for it. */
  run: (consumer: Consumer) => Promise<void>;
  logger: { warn(obj: object, msg: string): void };
  /** Told before each replacement (a metric). */
  onReplacing?: (reason: ConsumerDeath) => void;
  /**
   * Logs each replacement instead of the default lines (one per replacement, one per failed start);
   * `err` is the crash kafkajs gave up on, or the failed start before this attempt.
   */
  log?: (replacement: { reason: ConsumerDeath; attempt: number; err?: Error }) => void;
  /**
   * How the back-off grows: 'per-death' (default) starts over at each death and grows while
   * replacements fail to start; 'until-joined' grows with every replacement until a consumer joins.
   */
  backOff?: 'per-death' | 'until-joined';
  /** The owner is stopping: nothing more is replaced, as after stopWatching. */
  stopping?: () => boolean;
}

/**
 * A consumer that is watched (watchConsumer) and replaced in this process when it dies or
 * hangs: the dead one is retired (retireConsumer: bounded disconnect, back-off), a new one
 * created and run; a replacement that fails to start is retried with a longer back-off, never
 * given up. For a consumer whose owner keeps no state tied to the instance (where it resumes
 * from is decided in `create`'s listeners or by the group).
 */
export class ReplacingConsumer {
  private consumer?: Consumer;
  private watch?: ConsumerWatch;
  private stopped = false;
  /** The `run` of the current consumer (settles once it has joined or crashed). */
  private running?: Promise<void>;
  /** Consecutive replacements, as options.backOff counts them. */
  private attempts = 0;

  constructor(private readonly options: ReplacingConsumerOptions) {}

  /** The consumer now running (undefined before start). */
  get current(): Consumer | undefined {
    return this.consumer;
  }

  /** Creates and runs the first consumer; throws if that fails. */
  async start(): Promise<void> {
    const { create, connect, run, stallMs, backOff } = this.options;
    const consumer = create();
    this.consumer = consumer;
    if (backOff === 'until-joined') {
      consumer.on(consumer.events.GROUP_JOIN, () => {
        if (this.consumer === consumer) this.attempts = 0;
      });
    }
    this.watch?.stop();
    this.watch = watchConsumer(consumer, {
      stallMs,
      onDead: (reason, err) => void this.replace(consumer, reason, err),
    });
    if (connect) await connect(consumer); // no await without it: `running` is set in this tick
    this.running = run(consumer);
    await this.running;
  }

  /** Replaces the consumer now running, for a death its owner found (the group evicted it). */
  replaceCurrent(reason: ConsumerDeath, err?: Error): void {
    const consumer = this.consumer;
    if (!consumer) return;
    this.watch?.stop(); // its watch must not replace it a second time
    void this.replace(consumer, reason, err);
  }

  /** Nothing more is replaced; the consumer runs on until stop() or the owner disconnects it. */
  stopWatching(): void {
    this.stopped = true;
    this.watch?.stop();
  }

  async stop(): Promise<void> {
    this.stopWatching();
    await this.consumer
      ?.disconnect()
      .catch((err: unknown) => this.options.logger.warn({ err }, `${this.options.what} consumer disconnect failed`));
  }

  /** `retry`: the last replacement failed to start; this one continues its back-off. */
  private async replace(old: Consumer, reason: ConsumerDeath, err?: Error, retry = false): Promise<void> {
    const { what, logger, log } = this.options;
    if (this.isStopping() || this.consumer !== old) return;
    if (this.options.backOff !== 'until-joined' && !retry) this.attempts = 0;
    const attempt = ++this.attempts;
    this.options.onReplacing?.(reason);
    if (log) log({ reason, attempt, err });
    else logger.warn({ reason, attempt }, `${what} consumer ${reason}; replacing it`);
    await retireConsumer(old, attempt, undefined, this.running);
    if (this.isStopping() || this.consumer !== old) return;
    try {
      await this.start();
    } catch (failure) {
      if (!log) logger.warn({ err: failure }, `replacing the ${what} consumer failed; trying again`);
      this.watch?.stop(); // this attempt's watch must not replace it a second time
      void this.replace(this.consumer ?? old, 'crashed', failure instanceof Error ? failure : undefined, true);
    }
  }

  private isStopping(): boolean {
    return this.stopped || (this.options.stopping?.() ?? false);
  }
}
