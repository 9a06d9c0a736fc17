import { EventEmitter } from 'node:events';
import type { Consumer } from 'kafkajs';
import { replacementDelayMs, watchConsumer, type ConsumerDeath } from '../src/consumer-watch';

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
  const consumer = {
    events,
    on: (name: string, fn: (e: unknown) => void) => {
      emitter.on(name, fn);
      return () => emitter.off(name, fn);
    },
  } as unknown as Consumer;
  return {
    consumer,
    emit: (name: keyof typeof events, payload: object = {}) => emitter.emit(events[name], { payload }),
    listeners: () => Object.values(events).reduce((n, e) => n + emitter.listenerCount(e), 0),
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
