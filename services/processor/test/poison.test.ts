import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
} from 'kafkajs';
import { TaskFailure } from '../src/tasks/errors';
import { PoisonWatch, poisonCause } from '../src/tasks/poison';

/** A broker error as kafkajs builds it from a Kafka error code. */
function brokerError(type: string, code: number, retriable: boolean): KafkaJSProtocolError {
  return new KafkaJSProtocolError({ type, code, retriable, message: `${type} from the broker` } as never);
}

/** What a transactional sendBatch rejects with: kafkajs's retrier bails out on a non-retriable error, wrapping it. */
function bailed(err: Error): Error {
  return new KafkaJSNonRetriableError(err, { cause: err });
}

describe('which task failures count towards isolating a record', () => {
  it.each([
    ['MESSAGE_TOO_LARGE', 10, false],
    ['RECORD_LIST_TOO_LARGE', 18, false],
    ['INVALID_RECORD', 87, false],
  ])('a commit the broker refused with %s (a record that will be refused again)', (type, code, retriable) => {
    const failure = new TaskFailure('commit', 'task 0: transaction failed', bailed(brokerError(type, code, retriable)));
    expect(poisonCause(failure)).toEqual({ code: 'RECORD_REJECTED', reason: expect.stringContaining(type) });
  });

  it('a CORRUPT_MESSAGE kafkajs retried until it gave up', () => {
    const corrupt = brokerError('CORRUPT_MESSAGE', 2, true);
    const failure = new TaskFailure(
      'commit',
      'x',
      new KafkaJSNumberOfRetriesExceeded(corrupt, { retryCount: 5, retryTime: 1 } as never),
    );
    expect(poisonCause(failure)?.code).toBe('RECORD_REJECTED');
  });

  it('a fold that threw something other than a store error, with a bounded reason and no stack', () => {
    const failure = new TaskFailure('fold', 'x', new TypeError(`cannot read ${'x'.repeat(2000)}`));
    const cause = poisonCause(failure)!;
    expect(cause.code).toBe('PROCESSING_FAILED');
    expect(cause.reason).toMatch(/^processing the record failed: TypeError: cannot read x+…$/);
    expect(cause.reason.length).toBeLessThanOrEqual(501);
  });

  it.each([
    ['a request timeout', new KafkaJSRequestTimeoutError('Request Produce(key: 0, version: 7) timed out' as never)],
    ['a lost connection', new KafkaJSConnectionError('Connection error: ECONNREFUSED')],
    ['no answer by the commit deadline', new Error('no answer within 40000 ms')],
    ['fencing', bailed(brokerError('INVALID_PRODUCER_EPOCH', 47, false))],
    ['a coordinator move', brokerError('NOT_COORDINATOR', 16, true)],
    [
      'a leader move, retried until kafkajs gave up',
      new KafkaJSNumberOfRetriesExceeded(brokerError('NOT_LEADER_FOR_PARTITION', 6, true), {
        retryCount: 5,
        retryTime: 1,
      } as never),
    ],
    // The text says "too large" but the code does not: the code decides.
    ['an error whose message merely mentions a large message', new Error('MESSAGE_TOO_LARGE?')],
  ])('never %s', (_what, err) => {
    expect(poisonCause(new TaskFailure('commit', 'x', err))).toBeUndefined();
  });

  it.each(['store', 'restore', 'fenced'] as const)('never a %s failure', (kind) => {
    expect(
      poisonCause(new TaskFailure(kind, 'x', bailed(brokerError('MESSAGE_TOO_LARGE', 10, false)))),
    ).toBeUndefined();
  });
});

describe('PoisonWatch', () => {
  const at = (events: bigint, commands = 0n) =>
    new Map([
      ['events', events],
      ['commands', commands],
    ]);

  it('isolates after the bounded attempts at the same position, until the furthest position they folded to', () => {
    const watch = new PoisonWatch(3);
    expect(watch.started(at(10n))).toBe(false);
    expect(watch.failed(true, at(15n))).toBe(false);
    expect(watch.started(at(10n))).toBe(false);
    expect(watch.failed(true, at(18n))).toBe(false);
    expect(watch.started(at(10n))).toBe(false);
    expect(watch.failed(true, at(12n))).toBe(true);
    expect(watch.started(at(10n))).toBe(true);
    expect(watch.committed(at(11n))).toBe(true);
    expect(watch.committed(at(17n))).toBe(true);
    expect(watch.committed(at(18n))).toBe(false); // past every record the failed attempts held: none was poison
  });

  it('does not count transient failures, and starts over after a commit or at a new position', () => {
    const watch = new PoisonWatch(2);
    watch.started(at(10n));
    expect(watch.failed(false, at(12n))).toBe(false);
    watch.started(at(10n));
    expect(watch.failed(false, at(12n))).toBe(false);
    watch.started(at(10n));
    expect(watch.failed(true, at(12n))).toBe(false);
    watch.started(at(10n));
    watch.committed(at(11n)); // a commit in between: progress
    expect(watch.failed(true, at(12n))).toBe(false);
    watch.started(at(11n)); // a new restart position
    expect(watch.failed(true, at(12n))).toBe(false);
    watch.started(at(11n));
    expect(watch.failed(true, at(12n))).toBe(true);
  });

  it('ends isolation once the record is dead-lettered, and a restart past it does not isolate', () => {
    const watch = new PoisonWatch(1);
    watch.started(at(5n));
    expect(watch.failed(true, at(9n))).toBe(true);
    expect(watch.started(at(5n))).toBe(true);
    watch.isolated();
    expect(watch.isolating).toBe(false);
    const again = new PoisonWatch(1);
    again.started(at(5n));
    again.failed(true, at(9n));
    expect(again.started(at(9n))).toBe(false);
  });
});
