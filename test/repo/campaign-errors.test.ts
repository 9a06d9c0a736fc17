import { describeError } from '../faults/campaign';

// A failed campaign run records its first error; a client's one-line error must still say where
// it was thrown (a three-broker run once failed with nothing but "Connection timeout").

describe("a campaign run's error", () => {
  it('keeps a multi-line message (the scenario report) as it is', () => {
    const err = new Error('checks failed\ntimeline:\n  1.0s stack up');
    expect(describeError(err)).toBe('checks failed\ntimeline:\n  1.0s stack up');
  });

  it('gives a one-line error its type and where it was thrown', () => {
    class KafkaJSConnectionError extends Error {
      override name = 'KafkaJSConnectionError';
    }
    const text = describeError(new KafkaJSConnectionError('Connection timeout'));
    const [first, ...frames] = text.split('\n');
    expect(first).toBe('KafkaJSConnectionError: Connection timeout');
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.length).toBeLessThanOrEqual(6);
    expect(frames[0]).toMatch(/^ {2}at .*campaign-errors\.test\.ts/);
  });

  it('says what a thrown non-error was', () => {
    expect(describeError('refused')).toBe('refused');
  });
});
