import fc from 'fast-check';
import {
  commandDigest,
  encodeStoredEntity,
  hasSeen,
  rememberCommand,
  rememberDigest,
  seenHas,
  seenOf,
  storedEntitySizeBound,
  type StoredEntity,
} from '../src';

// storedEntitySizeBound lets the processor skip encoding an entity at fold (it is encoded once,
// at commit) while still refusing one over ENTITY_MAX_BYTES at fold: it must never be below the
// encoding's size, and must give up (Infinity) on anything only the encoder can judge.

const entity = (value: unknown, seen = ''): StoredEntity =>
  ({ version: 12345, value, seen }) as unknown as StoredEntity;

describe('storedEntitySizeBound', () => {
  it('is at least the encoded size of any JSON entity (strings with escapes, surrogates, any number)', () => {
    const text = fc.string({ unit: 'binary' }); // lone surrogates, control characters, astral planes
    const value = fc.dictionary(text, fc.jsonValue({ maxDepth: 4 }), { maxKeys: 8 });
    const seen = fc.array(fc.string(), { maxLength: 5 }).map(seenOf);
    fc.assert(
      fc.property(value, seen, fc.oneof(fc.nat(), fc.double({ noNaN: false })), (v, s, version) => {
        const e = { ...entity(v, s), version };
        expect(storedEntitySizeBound(e)).toBeGreaterThanOrEqual(encodeStoredEntity(e).length);
      }),
      { numRuns: 300 },
    );
  });

  it('holds at the extremes: the longest numbers, control characters, a lone surrogate, nesting', () => {
    const values = [
      { n: -1.2345678901234567e-123, m: -Number.MAX_VALUE, z: Number.MIN_VALUE, i: -9007199254740991 },
      { s: '\u0000\u0001\u001f"\\\n\ud800\udfff\ud83d\ude00é€' },
      { a: [[[[{ b: [null, true, false, ''] }]]]] },
      {},
      Object.assign(Object.create(null) as object, { k: 'v' }),
    ];
    for (const v of values)
      expect(storedEntitySizeBound(entity(v))).toBeGreaterThanOrEqual(encodeStoredEntity(entity(v)).length);
  });

  it('gives up on what only the encoder can judge', () => {
    class Money {
      constructor(readonly cents: number) {}
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = { deep };
    for (const v of [
      { at: new Date(0) },
      { m: new Money(1) },
      { n: 10n },
      { u: undefined },
      { f: () => 1 },
      { toJSON: () => 'x' },
      cyclic,
      deep,
    ]) {
      expect(storedEntitySizeBound(entity(v))).toBe(Infinity);
    }
  });
});

describe('command digests, hashed once', () => {
  it('seenHas and rememberDigest agree with hasSeen and rememberCommand', () => {
    const seen = seenOf(['a', 'b']);
    expect(seenHas(seen, commandDigest('a'))).toBe(hasSeen(seen, 'a'));
    expect(seenHas(seen, commandDigest('c'))).toBe(false);
    expect(rememberDigest(seen, commandDigest('c'))).toBe(rememberCommand(seen, 'c'));
  });
});
