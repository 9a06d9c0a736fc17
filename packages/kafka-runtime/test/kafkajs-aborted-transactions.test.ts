import { batchReader } from '../src/kafkajs';

// kafkajs's read_committed filter (src/consumer/filterAbortedMessages.js, as patched) on Fetch v11
// responses written byte by byte against the protocol guide's layout (kafka.apache.org/protocol:
// Fetch v11, RecordBatch v2, control records), decoded by kafkajs's own Fetch decoder and read
// through batchReader, the path restore takes. The broker lists a partition's aborted
// transactions in the order their aborts completed (its transaction index), which need not be
// the order of their first offsets.

const TOPIC = 'changelog';
const decodeFetchV11 = (
  require('kafkajs/src/protocol/requests/fetch/v11/response') as {
    decode(b: Buffer): Promise<{ responses: Array<{ partitions: unknown[] }> }>;
  }
).decode;

const int8 = (n: number) => Buffer.from([n & 0xff]);
const int16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const int64 = (n: bigint | number) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
};
/** VARINT / VARLONG: zigzag, then 7 bits a byte. */
const varint = (n: number) => {
  let z = n >= 0 ? n * 2 : -n * 2 - 1;
  const out: number[] = [];
  while (z >= 0x80) {
    out.push((z & 0x7f) | 0x80);
    z = Math.floor(z / 128);
  }
  out.push(z);
  return Buffer.from(out);
};
const varBytes = (b: Buffer | null) => (b === null ? varint(-1) : Buffer.concat([varint(b.length), b]));
const bytes = (...parts: Buffer[]) => Buffer.concat(parts);
const string = (s: string) => bytes(int16(Buffer.byteLength(s)), Buffer.from(s));

/** Record (v2): length attributes timestampDelta offsetDelta key value headers. */
const record = (offsetDelta: number, key: Buffer | null, value: Buffer | null) => {
  const body = bytes(int8(0), varint(0), varint(offsetDelta), varBytes(key), varBytes(value), varint(0));
  return bytes(varint(body.length), body);
};

const TRANSACTIONAL = 0x10;
const CONTROL = 0x20;
const ABORT = 0;
const COMMIT = 1;

interface BatchSpec {
  base: number;
  producerId: number;
  /** Record values of a data batch, or the control record's type. */
  values?: string[];
  keys?: Array<Buffer | null>;
  marker?: typeof ABORT | typeof COMMIT;
  transactional?: boolean;
}

/**
 * RecordBatch (magic 2): baseOffset batchLength partitionLeaderEpoch magic crc attributes
 * lastOffsetDelta baseTimestamp maxTimestamp producerId producerEpoch baseSequence [records].
 * kafkajs does not check the CRC; 0 is written.
 */
const recordBatch = ({ base, producerId, values = [], keys = [], marker, transactional = true }: BatchSpec) => {
  const records =
    marker === undefined
      ? values.map((v, i) => record(i, keys[i] ?? Buffer.from(`k-${v}`), Buffer.from(v)))
      : [record(0, bytes(int16(0), int16(marker)), bytes(int16(0), int32(7)))]; // key: version type; value: version coordinator_epoch
  const attributes = (transactional ? TRANSACTIONAL : 0) | (marker === undefined ? 0 : CONTROL);
  const afterLength = bytes(
    int32(0), // partition leader epoch
    int8(2), // magic
    int32(0), // crc
    int16(attributes),
    int32(records.length - 1),
    int64(1_700_000_000_000),
    int64(1_700_000_000_000),
    int64(producerId),
    int16(0),
    int32(-1),
    int32(records.length),
    ...records,
  );
  return bytes(int64(base), int32(afterLength.length), afterLength);
};

/** Fetch v11 response: one topic, one partition, the given aborted transactions (as listed) and batches. */
const fetchResponse = (aborted: Array<{ producerId: number; firstOffset: number }> | null, batches: Buffer[]) => {
  const recordSet = bytes(...batches);
  const abortedTransactions =
    aborted === null
      ? int32(-1)
      : bytes(int32(aborted.length), ...aborted.map((a) => bytes(int64(a.producerId), int64(a.firstOffset))));
  return bytes(
    int32(0), // throttle_time_ms
    int16(0), // error_code
    int32(0), // session_id
    int32(1), // responses
    string(TOPIC),
    int32(1), // partitions
    int32(0), // partition_index
    int16(0), // error_code
    int64(100), // high_watermark
    int64(100), // last_stable_offset
    int64(0), // log_start_offset
    abortedTransactions,
    int32(-1), // preferred_read_replica
    int32(recordSet.length),
    recordSet,
  );
};

/** The values of the records batchReader passes on (what a restore folds) for a fetch from `fetchOffset`. */
async function readCommitted(raw: Buffer, fetchOffset = '0'): Promise<string[]> {
  const decoded = await decodeFetchV11(raw);
  const data = decoded.responses[0]!.partitions[0] as Parameters<ReturnType<typeof batchReader>>[2];
  const batch = batchReader()(TOPIC, fetchOffset, data);
  return batch.messages.map((m) => (m as { value: Buffer }).value.toString());
}

const A = 1000; // producer ids
const B = 2000;
const C = 3000;

/**
 * C commits c0; B starts a transaction (b0 at 2) before A starts one (a0 at 3); they interleave;
 * A aborts first (marker at 5), then B (marker at 8); C commits c1 and B commits b3 afterwards.
 */
const interleaved = [
  recordBatch({ base: 0, producerId: C, values: ['c0'] }),
  recordBatch({ base: 1, producerId: C, marker: COMMIT }),
  recordBatch({ base: 2, producerId: B, values: ['b0'] }),
  recordBatch({ base: 3, producerId: A, values: ['a0'] }),
  recordBatch({ base: 4, producerId: B, values: ['b1'] }),
  recordBatch({ base: 5, producerId: A, marker: ABORT }),
  recordBatch({ base: 6, producerId: B, values: ['b2'] }),
  recordBatch({ base: 7, producerId: C, values: ['c1'] }),
  recordBatch({ base: 8, producerId: B, marker: ABORT }),
  recordBatch({ base: 9, producerId: C, marker: COMMIT }),
  recordBatch({ base: 10, producerId: B, values: ['b3', 'b4'] }),
  recordBatch({ base: 12, producerId: B, marker: COMMIT }),
  recordBatch({ base: 13, producerId: A, values: ['plain'], transactional: false }),
];

describe("kafkajs's read_committed filter (the kafkajs patch)", () => {
  it('drops every record of two aborted transactions listed in the order their aborts completed, not of their first offsets', async () => {
    // As the broker lists them: A's abort completed first.
    const raw = fetchResponse(
      [
        { producerId: A, firstOffset: 3 },
        { producerId: B, firstOffset: 2 },
      ],
      interleaved,
    );
    expect(await readCommitted(raw)).toEqual(['c0', 'c1', 'b3', 'b4', 'plain']);
  });

  it('activates every aborted transaction begun at or before a batch, also several at once when fetching from the middle', async () => {
    // From offset 4: both transactions began before the first record fetched.
    const raw = fetchResponse(
      [
        { producerId: B, firstOffset: 2 },
        { producerId: A, firstOffset: 3 },
      ],
      interleaved,
    );
    expect(await readCommitted(raw, '4')).toEqual(['c1', 'b3', 'b4', 'plain']);
    // From a0 (offset 3), both begun before it: the first record fetched is A's, the second listed.
    const fromMiddle = fetchResponse(
      [
        { producerId: B, firstOffset: 0 },
        { producerId: A, firstOffset: 1 },
      ],
      [
        recordBatch({ base: 0, producerId: B, values: ['b0', 'b1', 'b2'] }),
        recordBatch({ base: 3, producerId: A, values: ['a0'] }),
        recordBatch({ base: 4, producerId: A, marker: ABORT }),
        recordBatch({ base: 5, producerId: B, marker: ABORT }),
        recordBatch({ base: 6, producerId: C, values: ['c0'] }),
        recordBatch({ base: 7, producerId: C, marker: COMMIT }),
      ],
    );
    expect(await readCommitted(fromMiddle, '3')).toEqual(['c0']);
    // From inside B's first batch (records before the fetch offset are dropped first).
    expect(await readCommitted(fromMiddle, '1')).toEqual(['c0']);
  });

  it('ends an aborted transaction only at its producer’s ABORT control record, not at a COMMIT marker or a data record keyed 00 00 00 00', async () => {
    const raw = fetchResponse(
      [{ producerId: A, firstOffset: 0 }],
      [
        recordBatch({ base: 0, producerId: A, values: ['a0'] }),
        recordBatch({ base: 1, producerId: A, values: ['a1'], keys: [Buffer.from([0, 0, 0, 0])] }),
        recordBatch({ base: 2, producerId: A, values: ['a2'] }),
        recordBatch({ base: 3, producerId: B, values: ['b0'] }),
        recordBatch({ base: 4, producerId: B, marker: COMMIT }),
        recordBatch({ base: 5, producerId: A, values: ['a3'] }),
        recordBatch({ base: 6, producerId: A, marker: ABORT }),
        recordBatch({ base: 7, producerId: A, values: ['a4'] }),
        recordBatch({ base: 8, producerId: A, marker: COMMIT }),
      ],
    );
    expect(await readCommitted(raw)).toEqual(['b0', 'a4']);
  });

  it('keeps the single, ordered aborted transaction case as it was: its records and every marker dropped, the rest kept', async () => {
    const batches = [
      recordBatch({ base: 0, producerId: A, values: ['a0', 'a1'] }),
      recordBatch({ base: 2, producerId: A, marker: COMMIT }),
      recordBatch({ base: 3, producerId: A, values: ['a2', 'a3'] }),
      recordBatch({ base: 5, producerId: A, marker: ABORT }),
      recordBatch({ base: 6, producerId: A, values: ['a4'] }),
      recordBatch({ base: 7, producerId: A, marker: COMMIT }),
    ];
    expect(await readCommitted(fetchResponse([{ producerId: A, firstOffset: 3 }], batches))).toEqual([
      'a0',
      'a1',
      'a4',
    ]);
    // No aborted transactions (an empty or a null array): only the markers go.
    expect(await readCommitted(fetchResponse([], batches))).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    expect(await readCommitted(fetchResponse(null, batches))).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
  });
});
