import { decodeInputPositions, encodeInputPositions, INPUT_POSITIONS_HEADER } from '../src';

describe('input positions header (changelog)', () => {
  const positions = new Map([
    ['app-events', 4031n],
    ['app-commands', 12n],
  ]);

  it('is compact topic=offset pairs in topic order, and round-trips as a string or as bytes', () => {
    expect(INPUT_POSITIONS_HEADER).toBe('sr-inputs');
    const text = encodeInputPositions(positions);
    expect(text).toBe('app-commands=12,app-events=4031');
    expect(decodeInputPositions(text)).toEqual(positions);
    expect(decodeInputPositions(Buffer.from(text))).toEqual(positions);
  });

  it('keeps int64 offsets exact', () => {
    const max = new Map([['t', 9223372036854775807n]]);
    expect(decodeInputPositions(encodeInputPositions(max))).toEqual(max);
  });

  it('refuses to encode what it could not decode', () => {
    expect(() => encodeInputPositions(new Map([['a=b', 1n]]))).toThrow(/not a Kafka topic name/);
    expect(() => encodeInputPositions(new Map([['t', -1n]]))).toThrow(/not an int64 offset/);
  });

  it('an absent header teaches nothing', () => {
    expect(decodeInputPositions(undefined)).toEqual(new Map());
  });

  it.each([
    ['empty', ''],
    ['no offset', 'events'],
    ['empty offset', 'events='],
    ['negative', 'events=-1'],
    ['leading zero', 'events=01'],
    ['not a number', 'events=ten'],
    ['past int64', 'events=9223372036854775808'],
    ['bad topic', 'ev ents=1'],
    ['one bad pair of two', 'events=1,commands'],
    ['a topic twice', 'events=1,events=2'],
    ['not UTF-8', Buffer.from([0xff, 0x3d, 0x31])],
    ['huge', `events=1,${'x'.repeat(9000)}=1`],
  ])('garbage (%s) teaches nothing: the whole value is ignored', (_name, value) => {
    expect(decodeInputPositions(value)).toEqual(new Map());
  });

  it('several values merge by the highest offset per topic; a garbage one is skipped', () => {
    expect(decodeInputPositions(['events=5,commands=9', 'events=7', 'junk'])).toEqual(
      new Map([
        ['events', 7n],
        ['commands', 9n],
      ]),
    );
  });
});
