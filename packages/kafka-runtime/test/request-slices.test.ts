import type { Message } from 'kafkajs';
import fc from 'fast-check';
import { boundedSlices, partitionSlicesOf, recordBytes, RECORD_OVERHEAD_BYTES, type TopicMessages } from '../src';

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

  /** Each request's batches: "topic/partition" (or "topic/keyed") → its records. */
  const batchesOf = (request: TopicMessages[]) => {
    const batches = new Map<string, Message[]>();
    for (const { topic, messages } of request) {
      for (const m of messages) {
        const key = `${topic}/${m.partition ?? 'keyed'}`;
        batches.set(key, [...(batches.get(key) ?? []), m]);
      }
    }
    return batches;
  };

  it('keeps every record, each partition in order; each batch and each request within its bound unless one record is bigger', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            topic: fc.constantFrom('changelog', 'results'),
            partition: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
            size: fc.integer({ min: 0, max: 3_000 }),
          }),
          { maxLength: 300 },
        ),
        fc.integer({ min: 100, max: 5_000 }),
        fc.integer({ min: 100, max: 20_000 }),
        (records, maxPartitionBytes, maxRequestBytes) => {
          const messages = records.map(({ topic, partition, size }, i) => ({
            topic,
            m: { key: `k${i}`, value: Buffer.alloc(size), ...(partition !== undefined && { partition }) } as Message,
          }));
          const input: TopicMessages[] = ['changelog', 'results'].map((topic) => ({
            topic,
            messages: messages.filter((x) => x.topic === topic).map((x) => x.m),
          }));
          const requests = [...partitionSlicesOf(input, { maxPartitionBytes, maxRequestBytes })];
          const sent = new Map<string, Message[]>();
          for (const request of requests) {
            expect(request.length).toBeGreaterThan(0);
            const batches = batchesOf(request);
            let bytes = 0;
            for (const [key, batch] of batches) {
              const batchBytes = batch.reduce((sum, m) => sum + recordBytes(m), 0);
              if (batch.length > 1) expect(batchBytes).toBeLessThanOrEqual(maxPartitionBytes);
              bytes += batchBytes;
              sent.set(key, [...(sent.get(key) ?? []), ...batch]);
            }
            if (batches.size > 1) expect(bytes).toBeLessThanOrEqual(maxRequestBytes);
          }
          expect(sent).toEqual(batchesOf(input));
        },
      ),
    );
  });

  it('a transaction of 120 records of 60 KB over 6 partitions goes out in 3 requests, not 15 of 512 KiB', () => {
    // Ordered by partition, as a transaction's changelog records are (task by task).
    const messages = Array.from({ length: 120 }, (_, i) => ({ ...message(`k${i}`, 60_000), partition: i % 6 })).sort(
      (a, b) => a.partition - b.partition,
    );
    const requests = [
      ...partitionSlicesOf([{ topic: 't', messages }], { maxPartitionBytes: 512 * 1024, maxRequestBytes: 8 << 20 }),
    ];
    expect(requests.map((r) => [...batchesOf(r).values()].map((b) => b.length))).toEqual([
      [8, 8, 8, 8, 8, 8],
      [8, 8, 8, 8, 8, 8],
      [4, 4, 4, 4, 4, 4],
    ]);
  });

  it('a request holds what fits of one round of batches; the rest of the round goes next', () => {
    const messages = [0, 1, 2].map((partition) => ({ ...message(`k${partition}`, 1_000), partition }));
    const requests = [
      ...partitionSlicesOf([{ topic: 't', messages }], {
        maxPartitionBytes: 10_000,
        maxRequestBytes: 2 * recordBytes(messages[0]!) + 1,
      }),
    ];
    expect(requests.map((r) => r[0]!.messages.map((m) => m.partition))).toEqual([[0, 1], [2]]);
  });

  it('counts headers: records whose headers would overfill a batch go in the next request', () => {
    const headers = { 'sr-inputs': Buffer.alloc(400) };
    const messages = [0, 1].map((i) => ({ ...message(`k${i}`, 100), partition: 0, headers }));
    const withoutHeaders = recordBytes(messages[0]!);
    const requests = [
      ...partitionSlicesOf([{ topic: 't', messages }], {
        maxPartitionBytes: 2 * withoutHeaders + 1, // both fit if the headers were not counted
        maxRequestBytes: 1 << 20,
      }),
    ];
    expect(requests).toHaveLength(2);
  });
});
