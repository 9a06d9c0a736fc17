import type { Message } from 'kafkajs';
import fc from 'fast-check';
import { boundedSlices, recordBytes, RECORD_OVERHEAD_BYTES, slicesOf } from '../src';

const message = (key: string, bytes: number): Message => ({ key, value: Buffer.alloc(bytes, 'v') });

describe('produce requests bounded by bytes', () => {
  it('a record takes its key, its value and the record overhead', () => {
    expect(recordBytes({ key: 'ké', value: Buffer.alloc(10) })).toBe(3 + 10 + RECORD_OVERHEAD_BYTES);
    expect(recordBytes({ key: null, value: null })).toBe(RECORD_OVERHEAD_BYTES);
  });

  it('keeps every item, in order, each slice within the bytes and the count; a bigger item goes alone', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3_000 }), { maxLength: 200 }),
        fc.integer({ min: 1, max: 2_000 }),
        fc.integer({ min: 1, max: 50 }),
        (sizes, maxBytes, maxCount) => {
          const items = sizes.map((size, i) => ({ i, size }));
          const slices = [...boundedSlices(items, (x) => x.size, { maxBytes, maxCount })];
          expect(slices.flat()).toEqual(items);
          for (const slice of slices) {
            expect(slice.length).toBeGreaterThan(0);
            expect(slice.length).toBeLessThanOrEqual(maxCount);
            const bytes = slice.reduce((sum, x) => sum + x.size, 0);
            if (slice.length > 1) expect(bytes).toBeLessThanOrEqual(maxBytes);
          }
          // Greedy: a slice is closed only when the next item would not fit.
          for (let s = 0; s + 1 < slices.length; s++) {
            const bytes = slices[s]!.reduce((sum, x) => sum + x.size, 0);
            const next = slices[s + 1]![0]!.size;
            expect(slices[s]!.length === maxCount || bytes + next > maxBytes).toBe(true);
          }
        },
      ),
    );
  });

  it('120 records of 60 KB go out in requests of at most 512 KiB, not one of 7 MB', () => {
    const messages = Array.from({ length: 120 }, (_, i) => message(`k${i}`, 60_000));
    const slices = [...slicesOf([{ topic: 't', messages }], 512 * 1024)];
    expect(slices.length).toBe(15); // 8 records per request
    for (const slice of slices) {
      expect(slice.flatMap((t) => t.messages).reduce((sum, m) => sum + recordBytes(m), 0)).toBeLessThanOrEqual(
        512 * 1024,
      );
    }
  });

  it('slices across topics keep each topic’s records together and in order', () => {
    const a = [message('a1', 300), message('a2', 300)];
    const b = [message('b1', 300), message('b2', 300)];
    const slices = [
      ...slicesOf(
        [
          { topic: 'a', messages: a },
          { topic: 'b', messages: b },
        ],
        2 * (300 + RECORD_OVERHEAD_BYTES + 2) + 1,
      ),
    ];
    expect(slices).toEqual([[{ topic: 'a', messages: a }], [{ topic: 'b', messages: b }]]);
  });
});
