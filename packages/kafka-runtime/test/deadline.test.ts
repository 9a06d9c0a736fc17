import { withDeadline } from '../src/deadline';

class LateError extends Error {}

describe('withDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** The outcome once settled: ['ok', value] or ['err', error]; undefined while pending. */
  function observe<T>(p: Promise<T>) {
    const seen: { outcome?: ['ok', T] | ['err', unknown] } = {};
    p.then(
      (v) => (seen.outcome = ['ok', v]),
      (e: unknown) => (seen.outcome = ['err', e]),
    );
    return seen;
  }

  it('settles as the promise does when it settles first, and clears its timer', async () => {
    const ok = observe(withDeadline(Promise.resolve(7), 1_000, { error: () => new LateError() }));
    const failure = new Error('broker said no');
    const failed = observe(withDeadline(Promise.reject(failure), 1_000, { fallback: null }));
    await jest.advanceTimersByTimeAsync(0);
    expect(ok.outcome).toEqual(['ok', 7]);
    expect(failed.outcome).toEqual(['err', failure]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('resolves with the fallback once the deadline passes first', async () => {
    const seen = observe(withDeadline(new Promise<number>(() => undefined), 1_000, { fallback: null }));
    await jest.advanceTimersByTimeAsync(999);
    expect(seen.outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(seen.outcome).toEqual(['ok', null]);
  });

  it('rejects with the error made at the deadline, and a loser that rejects later goes unobserved', async () => {
    let made = 0;
    let fail!: (err: Error) => void;
    const losing = new Promise<number>((_, reject) => (fail = reject));
    const observed = jest.spyOn(losing, 'then');
    const seen = observe(withDeadline(losing, 1_000, { error: () => (made++, new LateError('no answer')) }));
    await jest.advanceTimersByTimeAsync(500);
    expect(made).toBe(0); // the error is made when the deadline passes, not before
    await jest.advanceTimersByTimeAsync(500);
    expect(seen.outcome?.[0]).toBe('err');
    expect(seen.outcome?.[1]).toBeInstanceOf(LateError);
    // jest's sandbox hides unhandledRejection from the test: look for the handler instead.
    expect(observed.mock.calls.some(([, onRejected]) => typeof onRejected === 'function')).toBe(true);
    fail(new Error('settled when its client was torn down'));
    await jest.advanceTimersByTimeAsync(0);
    expect(seen.outcome?.[1]).toBeInstanceOf(LateError);
    expect(made).toBe(1);
  });
});
