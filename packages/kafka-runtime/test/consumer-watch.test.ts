import { EventEmitter } from 'node:events';
import type { Consumer } from 'kafkajs';
import {
  ReplacingConsumer,
  replacementDelayMs,
  retireConsumer,
  watchConsumer,
  type ConsumerDeath,
  type ReplacingConsumerOptions,
} from '../src/consumer-watch';

/** The part of a kafkajs consumer the watch uses: named events and removable listeners. */
function fakeConsumer() {
  const emitter = new EventEmitter();
  const events = {
    FETCH: 'consumer.fetch',
    GROUP_JOIN: 'consumer.group_join',
    REBALANCING: 'consumer.rebalancing',
    CONNECT: 'consumer.connect',
    CRASH: 'consumer.crash',
  };
  let disconnects = 0;
  const consumer = {
    events,
    on: (name: string, fn: (e: unknown) => void) => {
      emitter.on(name, fn);
      return () => emitter.off(name, fn);
    },
    disconnect: async () => {
      disconnects++;
    },
  } as unknown as Consumer;
  return {
    consumer,
    emit: (name: keyof typeof events, payload: object = {}) => emitter.emit(events[name], { payload }),
    listeners: () => Object.values(events).reduce((n, e) => n + emitter.listenerCount(e), 0),
    disconnects: () => disconnects,
  };
}

describe('watchConsumer', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function watched(stallMs = 1_000) {
    const fake = fakeConsumer();
    const deaths: Array<[ConsumerDeath, Error | undefined]> = [];
    const watch = watchConsumer(fake.consumer, {
      stallMs,
      checkEveryMs: 100,
      now: () => Date.now(),
      onDead: (reason, err) => deaths.push([reason, err]),
    });
    return { ...fake, deaths, watch };
  }

  it('reports a consumer that neither fetches, joins nor rebalances for stallMs as stalled, once', () => {
    const w = watched();
    jest.advanceTimersByTime(900);
    w.emit('FETCH');
    jest.advanceTimersByTime(900);
    w.emit('REBALANCING');
    jest.advanceTimersByTime(900);
    w.emit('GROUP_JOIN');
    jest.advanceTimersByTime(900);
    expect(w.deaths).toEqual([]);
    jest.advanceTimersByTime(200);
    expect(w.deaths.map(([r]) => r)).toEqual(['stalled']);
    jest.advanceTimersByTime(5_000);
    expect(w.deaths).toHaveLength(1);
    expect(w.listeners()).toBe(0);
  });

  it('reports a crash kafkajs will not restart from at once, with its error', () => {
    const w = watched();
    const err = new Error('No broker available');
    w.emit('CRASH', { error: err, restart: false });
    expect(w.deaths).toEqual([['crashed', err]]);
    jest.advanceTimersByTime(5_000);
    expect(w.deaths).toHaveLength(1);
  });

  it('takes neither a crash kafkajs restarts from nor a fetch that never completes as a sign of life', () => {
    const w = watched();
    jest.advanceTimersByTime(500);
    w.emit('CRASH', { error: new Error('Request Fetch timed out'), restart: true });
    jest.advanceTimersByTime(400);
    expect(w.deaths).toEqual([]);
    jest.advanceTimersByTime(200);
    expect(w.deaths.map(([r]) => r)).toEqual(['stalled']);
  });

  it('reports nothing after stop()', () => {
    const w = watched();
    w.watch.stop();
    w.emit('CRASH', { error: new Error('x'), restart: false });
    jest.advanceTimersByTime(5_000);
    expect(w.deaths).toEqual([]);
    expect(w.listeners()).toBe(0);
  });
});

describe('replacementDelayMs', () => {
  it('starts at 1 s, doubles, and stays within ±20 % of a 30 s cap', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => replacementDelayMs(n, mid))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
    expect(replacementDelayMs(1, () => 0)).toBe(800);
    expect(replacementDelayMs(9, () => 0.999999)).toBeLessThanOrEqual(36_000);
  });
});

describe('ReplacingConsumer', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function replacing(runFails: (n: number) => boolean = () => false, more: Partial<ReplacingConsumerOptions> = {}) {
    const made: Array<ReturnType<typeof fakeConsumer>> = [];
    const reasons: ConsumerDeath[] = [];
    const warnings: string[] = [];
    const attempts: number[] = [];
    const c = new ReplacingConsumer({
      what: 'test follower',
      stallMs: 60_000, // the fakes never fetch: only crashes replace them here
      logger: {
        warn: (obj, msg) => {
          warnings.push(msg);
          if ('attempt' in obj) attempts.push(obj.attempt as number);
        },
      },
      onReplacing: (r) => reasons.push(r),
      create: () => {
        const fake = fakeConsumer();
        made.push(fake);
        return fake.consumer;
      },
      run: async () => {
        if (runFails(made.length)) throw new Error('connect failed');
      },
      ...more,
    });
    /** The n-th consumer (1-based) crashes for good. */
    const crash = (n: number) => made[n - 1]!.emit('CRASH', { error: new Error(`crash ${n}`), restart: false });
    /** Crashes the n-th consumer, then lets `ms` pass (past the back-off of its replacement). */
    const crashAndWait = async (n: number, ms: number) => {
      crash(n);
      await jest.advanceTimersByTimeAsync(ms);
    };
    return { c, made, reasons, warnings, attempts, crash, crashAndWait };
  }

  it('replaces a consumer kafkajs gave up on with a new one, after retiring the old one', async () => {
    const r = replacing();
    await r.c.start();
    expect(r.made).toHaveLength(1);
    r.made[0]!.emit('CRASH', { error: new Error('No broker available'), restart: false });
    await jest.advanceTimersByTimeAsync(1_500); // back-off of the first replacement: 0.8–1.2 s
    expect(r.reasons).toEqual(['crashed']);
    expect(r.made[0]!.disconnects()).toBe(1);
    expect(r.made).toHaveLength(2);
    expect(r.c.current).toBe(r.made[1]!.consumer);
    expect(r.made[0]!.listeners()).toBe(0); // the old watch is gone
    await r.c.stop();
    expect(r.made[1]!.disconnects()).toBe(1);
  });

  it('keeps trying when a replacement fails to start, and stops trying once stopped', async () => {
    const r = replacing((n) => n === 2 || n === 3);
    await r.c.start();
    r.made[0]!.emit('CRASH', { error: new Error('x'), restart: false });
    await jest.advanceTimersByTimeAsync(1_500); // attempt 1 fails to start
    await jest.advanceTimersByTimeAsync(3_000); // attempt 2 (back-off 1.6–2.4 s) fails too
    await jest.advanceTimersByTimeAsync(5_000); // attempt 3 (3.2–4.8 s) runs
    expect(r.made).toHaveLength(4);
    expect(r.warnings.filter((w) => w.includes('failed; trying again'))).toHaveLength(2);
    await r.c.stop();
    r.made[3]!.emit('CRASH', { error: new Error('y'), restart: false });
    await jest.advanceTimersByTimeAsync(10_000);
    expect(r.made).toHaveLength(4);
  });

  it("by default starts each death's back-off over: only failed starts lengthen it", async () => {
    const r = replacing((n) => n === 3);
    await r.c.start();
    await r.crashAndWait(1, 1_500);
    await r.crashAndWait(2, 4_500); // consumer 3 fails to start; consumer 4 follows 1.6–2.4 s later
    await r.crashAndWait(4, 1_500);
    expect(r.made).toHaveLength(5);
    expect(r.attempts).toEqual([1, 1, 2, 1]);
    await r.c.stop();
  });

  it("with backOff 'until-joined', lengthens the back-off with every replacement until a consumer joins", async () => {
    const r = replacing(() => false, { backOff: 'until-joined' });
    await r.c.start();
    await r.crashAndWait(1, 1_500);
    await r.crashAndWait(2, 3_000); // consumer 2 started, but never joined
    r.made[0]!.emit('GROUP_JOIN'); // a retired consumer's join resets nothing
    await r.crashAndWait(3, 5_000);
    r.made[3]!.emit('GROUP_JOIN');
    await r.crashAndWait(4, 1_500);
    expect(r.made).toHaveLength(5);
    expect(r.attempts).toEqual([1, 2, 3, 1]);
    await r.c.stop();
  });

  it('replaceCurrent replaces the consumer now running, for the reason given, once', async () => {
    const r = replacing();
    await r.c.start();
    r.c.replaceCurrent('evicted');
    expect(r.made[0]!.listeners()).toBe(0); // its watch is gone: a crash now is no second replacement
    r.crash(1);
    await jest.advanceTimersByTimeAsync(1_500);
    expect(r.reasons).toEqual(['evicted']);
    expect(r.made).toHaveLength(2);
    expect(r.made[0]!.disconnects()).toBe(1);
    expect(r.c.current).toBe(r.made[1]!.consumer);
    await r.c.stop();
  });

  it('creates nothing more once stopped during a replacement, by stopWatching or by the owner stopping', async () => {
    const r = replacing();
    await r.c.start();
    r.crash(1);
    await jest.advanceTimersByTimeAsync(100); // retired, in its back-off
    r.c.stopWatching();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(r.made).toHaveLength(1);
    expect(r.made[0]!.disconnects()).toBe(1); // by the retirement; stopWatching disconnects nothing

    let stopping = false;
    const s = replacing(() => false, { stopping: () => stopping });
    await s.c.start();
    s.crash(1);
    await jest.advanceTimersByTimeAsync(100);
    stopping = true;
    await jest.advanceTimersByTimeAsync(5_000);
    expect(s.made).toHaveLength(1);
    s.c.replaceCurrent('evicted');
    await jest.advanceTimersByTimeAsync(5_000);
    expect(s.reasons).toEqual(['crashed']);
  });

  it("logs through the owner's log, with the failed start as err, instead of its own lines", async () => {
    const logged: Array<{ reason: ConsumerDeath; attempt: number; err?: Error }> = [];
    const r = replacing((n) => n === 2, { log: (entry) => logged.push(entry) });
    await r.c.start();
    r.crash(1);
    await jest.advanceTimersByTimeAsync(1_500); // consumer 2 fails to start
    await jest.advanceTimersByTimeAsync(3_000);
    expect(r.made).toHaveLength(3);
    expect(logged.map(({ reason, attempt, err }) => [reason, attempt, err?.message])).toEqual([
      ['crashed', 1, 'crash 1'],
      ['crashed', 2, 'connect failed'],
    ]);
    expect(r.warnings).toEqual([]);
    await r.c.stop();
  });

  it('waits for connect before run, and retires a consumer still connecting without waiting for it', async () => {
    const connected: number[] = [];
    const r = replacing(() => false, {
      connect: (consumer) =>
        r.made[0]!.consumer === consumer ? Promise.resolve(void connected.push(1)) : new Promise(() => undefined),
    });
    await r.c.start();
    r.crash(1);
    await jest.advanceTimersByTimeAsync(1_500);
    expect(r.made).toHaveLength(2); // consumer 2 connects forever
    r.c.replaceCurrent('stalled');
    await jest.advanceTimersByTimeAsync(1_500);
    expect(r.made[1]!.disconnects()).toBe(1);
    expect(r.made).toHaveLength(3);
    expect(connected).toEqual([1]);
    await r.c.stop();
  });
});

describe('retireConsumer', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  // kafkajs's disconnect does not stop a join in flight (its runner's stop is a no-op until the
  // join completes): the join would complete after the owner let go. So the run comes first.
  it('disconnects a consumer only once its run, still joining, has returned', async () => {
    const fake = fakeConsumer();
    let joined!: () => void;
    const running = new Promise<void>((resolve) => (joined = resolve));
    let retired = false;
    void retireConsumer(fake.consumer, 1, 10_000, running, 180_000).then(() => (retired = true));
    await jest.advanceTimersByTimeAsync(60_000);
    expect(fake.disconnects()).toBe(0);
    joined();
    await jest.advanceTimersByTimeAsync(1);
    expect(fake.disconnects()).toBe(1);
    await jest.advanceTimersByTimeAsync(1_500); // the back-off of a first replacement
    expect(retired).toBe(true);
  });

  it('disconnects anyway once a run has not returned within settleWithinMs, and after a run that failed', async () => {
    const hung = fakeConsumer();
    void retireConsumer(hung.consumer, 1, 10_000, new Promise(() => undefined), 5_000);
    await jest.advanceTimersByTimeAsync(4_999);
    expect(hung.disconnects()).toBe(0);
    await jest.advanceTimersByTimeAsync(2);
    expect(hung.disconnects()).toBe(1);

    const failed = fakeConsumer();
    void retireConsumer(failed.consumer, 1, 10_000, Promise.reject(new Error('join failed')));
    await jest.advanceTimersByTimeAsync(1);
    expect(failed.disconnects()).toBe(1);
  });

  it('ReplacingConsumer retires a consumer whose run is still joining only after that run returns', async () => {
    const made: Array<ReturnType<typeof fakeConsumer>> = [];
    let joinFirst!: () => void;
    const c = new ReplacingConsumer({
      what: 'test follower',
      stallMs: 60_000,
      logger: { warn: () => undefined },
      create: () => {
        const fake = fakeConsumer();
        made.push(fake);
        return fake.consumer;
      },
      run: () => (made.length === 1 ? new Promise<void>((resolve) => (joinFirst = resolve)) : Promise.resolve()),
    });
    void c.start();
    made[0]!.emit('CRASH', { error: new Error('x'), restart: false });
    await jest.advanceTimersByTimeAsync(5_000);
    expect(made[0]!.disconnects()).toBe(0);
    expect(made).toHaveLength(1);
    joinFirst();
    await jest.advanceTimersByTimeAsync(1_500);
    expect(made[0]!.disconnects()).toBe(1);
    expect(made).toHaveLength(2);
    await c.stop();
  });
});
