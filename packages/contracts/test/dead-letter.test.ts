import { DEAD_LETTER_HEADERS, deadLetterRecord, decodeEvent, type DecodeError } from '../src';
import { decodeFailure } from './helpers';

describe('deadLetterRecord', () => {
  const source = {
    topic: 'events',
    partition: 3,
    offset: '9007199254740993',
    key: Buffer.from([0x61, 0xff]),
    value: Buffer.from('not json'),
    headers: { traceparent: '00-abc-def-01', bin: Buffer.from([1, 2]), gone: undefined },
  };

  it('keeps the original bytes and headers and adds why and where it failed', () => {
    const err: DecodeError = decodeFailure(() => decodeEvent(source.key, source.value));
    const record = deadLetterRecord(source, err, 1_700_000_000_000);
    expect(record.key).toBe(source.key);
    expect(record.value).toBe(source.value);
    expect(record.headers).toEqual({
      traceparent: '00-abc-def-01',
      bin: Buffer.from([1, 2]),
      [DEAD_LETTER_HEADERS.reason]: 'key: not valid UTF-8',
      [DEAD_LETTER_HEADERS.code]: 'KEY_INVALID',
      [DEAD_LETTER_HEADERS.sourceTopic]: 'events',
      [DEAD_LETTER_HEADERS.sourcePartition]: '3',
      [DEAD_LETTER_HEADERS.sourceOffset]: '9007199254740993',
      [DEAD_LETTER_HEADERS.failedAt]: '1700000000000',
    });
  });

  it('keeps a null key and value (a tombstone on the wrong topic is still evidence)', () => {
    const record = deadLetterRecord(
      { ...source, key: null, value: null, headers: undefined },
      { code: 'X', reason: 'r' },
      1,
    );
    expect(record).toMatchObject({ key: null, value: null });
    expect(Object.keys(record.headers)).toEqual(
      Object.values(DEAD_LETTER_HEADERS).filter((h) => h !== DEAD_LETTER_HEADERS.omitted),
    );
  });

  it('overwrites dlq headers left by an earlier dead-lettering and caps the reason', () => {
    const again = { ...source, headers: { [DEAD_LETTER_HEADERS.code]: 'OLD' } };
    const record = deadLetterRecord(again, { code: 'NEW', reason: 'r'.repeat(5000) }, 1);
    expect(record.headers[DEAD_LETTER_HEADERS.code]).toBe('NEW');
    expect((record.headers[DEAD_LETTER_HEADERS.reason] as string).length).toBe(1001);
  });

  it('leaves out the value, then the original headers, then the key, to fit its bound, and says so', () => {
    const big = { ...source, key: Buffer.alloc(300, 'k'), value: Buffer.alloc(5000, 'v') };
    const noValue = deadLetterRecord(big, { code: 'RECORD_REJECTED', reason: 'too large' }, 1, 2000);
    expect(noValue.value).toBeNull();
    expect(noValue.key).toBe(big.key);
    expect(noValue.headers.traceparent).toBe('00-abc-def-01');
    expect(noValue.headers[DEAD_LETTER_HEADERS.omitted]).toBe('value=5000');

    const bare = deadLetterRecord(big, { code: 'RECORD_REJECTED', reason: 'too large' }, 1, 400);
    expect(bare).toMatchObject({ key: null, value: null });
    expect(bare.headers.traceparent).toBeUndefined();
    expect(bare.headers[DEAD_LETTER_HEADERS.omitted]).toMatch(/^value=5000,headers=\d+,key=300$/);
    expect(bare.headers[DEAD_LETTER_HEADERS.code]).toBe('RECORD_REJECTED');

    expect(
      deadLetterRecord(source, { code: 'X', reason: 'r' }, 1, 2000).headers[DEAD_LETTER_HEADERS.omitted],
    ).toBeUndefined();
  });
});
