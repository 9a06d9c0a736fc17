import { KafkaJSServerDoesNotSupportApiKey } from 'kafkajs';
import { BrokerTooOldError, KafkajsNotPatchedError, isFencedError } from '../src/errors';
import {
  API_KEYS,
  EOS_V2_VERSIONS,
  assertEosV2Versions,
  assertKafkajsPatched,
  implementedVersions,
} from '../src/kafkajs';

// The requests patches/kafkajs@2.2.4.patch adds, byte by byte against the layouts of the Kafka
// protocol guide (kafka.apache.org/protocol: TxnOffsetCommit v3, OffsetFetch v7, flexible
// versions of KIP-482), written here with a byte builder of the test's own, not kafkajs's Encoder.

type Encoded = { encode(): Promise<{ buffer: Buffer }> };
type Built = { apiKey: number; apiVersion: number; apiName: string } & Encoded;
type Protocol = (args: object) => {
  request: Built;
  response: { decode(b: Buffer): Promise<unknown>; parse(d: unknown): Promise<unknown> };
};
const table = (dir: string) =>
  require(`kafkajs/src/protocol/requests/${dir}`) as { versions: string[]; protocol(v: { version: number }): Protocol };
const frame = require('kafkajs/src/protocol/request') as (r: {
  correlationId: number;
  clientId: string;
  request: Built;
}) => Promise<{ buffer: Buffer }>;
const { lookup } = require('kafkajs/src/protocol/requests') as {
  lookup(
    versions: object,
  ): (apiKey: number, definition: { versions: string[]; protocol(v: { version: number }): unknown }) => unknown;
};

// The protocol's primitive types.
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
const int64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};
const uvarint = (n: number) => {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
};
/** COMPACT_STRING / COMPACT_NULLABLE_STRING: length + 1 as UNSIGNED_VARINT, 0 for null. */
const compactString = (s: string | null) =>
  s === null ? uvarint(0) : Buffer.concat([uvarint(Buffer.byteLength(s) + 1), Buffer.from(s)]);
/** COMPACT_ARRAY: N + 1 as UNSIGNED_VARINT, then the elements; 0 for null. */
const compactArray = (items: Buffer[] | null) =>
  items === null ? uvarint(0) : Buffer.concat([uvarint(items.length + 1), ...items]);
/** An empty TAG_BUFFER: zero tagged fields. */
const noTags = uvarint(0);
const bytes = (...parts: Buffer[]) => Buffer.concat(parts);

const encoded = async (r: Built) => (await r.encode()).buffer;

describe('TxnOffsetCommit v3 (the kafkajs patch)', () => {
  const protocol = table('txnOffsetCommit').protocol({ version: 3 });
  const build = (extra: object = {}) =>
    protocol({
      transactionalId: 'tx-1',
      groupId: 'grp',
      producerId: 4097,
      producerEpoch: 3,
      generationId: 12,
      memberId: 'm-1',
      topics: [{ topic: 'in', partitions: [{ partition: 2, offset: '1234567' }] }],
      ...extra,
    });

  it('encodes the flexible layout: the header tag buffer, compact strings and arrays, generation, member, a null instance id', async () => {
    const { request } = build();
    expect([request.apiKey, request.apiVersion, request.apiName]).toEqual([28, 3, 'TxnOffsetCommit']);
    expect(await encoded(request)).toEqual(
      bytes(
        noTags, // the request header's (v2) tagged fields, written first in the body
        compactString('tx-1'),
        compactString('grp'),
        int64(4097n),
        int16(3),
        int32(12),
        compactString('m-1'),
        compactString(null), // group_instance_id
        compactArray([
          bytes(
            compactString('in'),
            compactArray([bytes(int32(2), int64(1234567n), int32(-1), compactString(null), noTags)]),
            noTags,
          ),
        ]),
        noTags,
      ),
    );
  });

  it('frames it with request header v2: int16 client id, then the header tag buffer', async () => {
    const { buffer } = await frame({ correlationId: 77, clientId: 'c', request: build().request });
    const body = await encoded(build().request);
    const header = bytes(int16(28), int16(3), int32(77), int16(1), Buffer.from('c'));
    expect(buffer).toEqual(bytes(int32(header.length + body.length), header, body));
  });

  it('defaults to the "no group check" values (generation -1, member "") and writes metadata and an instance id when given', async () => {
    const { request } = build({
      generationId: undefined,
      memberId: undefined,
      groupInstanceId: 'inst-0',
      topics: [{ topic: 'in', partitions: [{ partition: 0, offset: '5', metadata: 'md' }] }],
    });
    expect(await encoded(request)).toEqual(
      bytes(
        noTags,
        compactString('tx-1'),
        compactString('grp'),
        int64(4097n),
        int16(3),
        int32(-1),
        compactString(''),
        compactString('inst-0'),
        compactArray([
          bytes(
            compactString('in'),
            compactArray([bytes(int32(0), int64(5n), int32(-1), compactString('md'), noTags)]),
            noTags,
          ),
        ]),
        noTags,
      ),
    );
  });

  it('decodes the response (header tag buffer, throttle, per-partition errors) and fails on a stale generation', async () => {
    const { response } = build();
    const raw = bytes(
      noTags, // the response header's (v1) tagged fields
      int32(10),
      compactArray([
        bytes(
          compactString('in'),
          compactArray([bytes(int32(2), int16(0), noTags), bytes(int32(3), int16(22), noTags)]),
          noTags,
        ),
      ]),
      noTags,
    );
    const decoded = await response.decode(raw);
    expect(decoded).toEqual({
      throttleTime: 0,
      clientSideThrottleTime: 10,
      topics: [
        {
          topic: 'in',
          partitions: [
            { partition: 2, errorCode: 0 },
            { partition: 3, errorCode: 22 },
          ],
        },
      ],
    });
    await expect(response.parse(decoded)).rejects.toMatchObject({ type: 'ILLEGAL_GENERATION', retriable: false });
  });

  it('skips tagged fields a newer broker adds', async () => {
    const { response } = build();
    const tagged = bytes(uvarint(1), uvarint(0), uvarint(2), Buffer.from([0xab, 0xcd])); // one field: tag 0, 2 bytes
    const raw = bytes(
      tagged,
      int32(0),
      compactArray([bytes(compactString('in'), compactArray([bytes(int32(2), int16(0), tagged)]), tagged)]),
      tagged,
    );
    expect(await response.decode(raw)).toMatchObject({
      topics: [{ topic: 'in', partitions: [{ partition: 2, errorCode: 0 }] }],
    });
  });
});

describe('OffsetFetch v7 (the kafkajs patch)', () => {
  const protocol = table('offsetFetch').protocol({ version: 7 });

  it('encodes the group, the partitions asked and require_stable', async () => {
    const { request } = protocol({
      groupId: 'grp',
      topics: [{ topic: 'in', partitions: [{ partition: 0 }, { partition: 5 }] }],
      requireStable: true,
    });
    expect([request.apiKey, request.apiVersion]).toEqual([9, 7]);
    expect(await encoded(request)).toEqual(
      bytes(
        noTags,
        compactString('grp'),
        compactArray([bytes(compactString('in'), compactArray([int32(0), int32(5)]), noTags)]),
        int8(1),
        noTags,
      ),
    );
  });

  it('encodes a null topic array (every topic of the group) and require_stable false by default', async () => {
    const { request } = protocol({ groupId: 'grp', topics: null });
    expect(await encoded(request)).toEqual(bytes(noTags, compactString('grp'), compactArray(null), int8(0), noTags));
  });

  it('writes no topics ([]) as the null array too: fetchOffsets without topics means every topic, as in v2-v4', async () => {
    // kafkajs's admin passes [] for "no topics given"; v2-v4 write that as a null array (length -1).
    const empty = await encoded(protocol({ groupId: 'grp', topics: [] }).request);
    expect(empty).toEqual(bytes(noTags, compactString('grp'), uvarint(0), int8(0), noTags));
    expect(empty).toEqual(await encoded(protocol({ groupId: 'grp', topics: null }).request));
    expect(
      await encoded(table('offsetFetch').protocol({ version: 4 })({ groupId: 'grp', topics: [] }).request),
    ).toEqual(bytes(int16(3), Buffer.from('grp'), int32(-1)));
    // One topic: an array of one (N + 1 = 2), its name and partitions.
    expect(
      await encoded(protocol({ groupId: 'grp', topics: [{ topic: 'in', partitions: [{ partition: 3 }] }] }).request),
    ).toEqual(
      bytes(
        noTags,
        compactString('grp'),
        uvarint(2),
        compactString('in'),
        uvarint(2),
        int32(3),
        noTags,
        int8(0),
        noTags,
      ),
    );
  });

  it('decodes offsets, leader epoch and metadata, and fails with the retriable UNSTABLE_OFFSET_COMMIT', async () => {
    const { response } = protocol({ groupId: 'grp', topics: [] });
    const partition = (p: number, offset: bigint, error: number, metadata: string | null) =>
      bytes(int32(p), int64(offset), int32(-1), compactString(metadata), int16(error), noTags);
    const raw = bytes(
      noTags,
      int32(0),
      compactArray([
        bytes(compactString('in'), compactArray([partition(0, 42n, 0, ''), partition(1, -1n, 88, null)]), noTags),
      ]),
      int16(0),
      noTags,
    );
    const decoded = await response.decode(raw);
    expect(decoded).toEqual({
      throttleTime: 0,
      clientSideThrottleTime: 0,
      errorCode: 0,
      responses: [
        {
          topic: 'in',
          partitions: [
            { partition: 0, offset: '42', leaderEpoch: -1, metadata: '', errorCode: 0 },
            { partition: 1, offset: '-1', leaderEpoch: -1, metadata: null, errorCode: 88 },
          ],
        },
      ],
    });
    await expect(response.parse(decoded)).rejects.toMatchObject({ type: 'UNSTABLE_OFFSET_COMMIT', retriable: true });
  });

  it('fails on a group-level error', async () => {
    const { response } = protocol({ groupId: 'grp', topics: [] });
    const decoded = await response.decode(bytes(noTags, int32(0), compactArray([]), int16(16), noTags));
    await expect(response.parse(decoded)).rejects.toMatchObject({ type: 'NOT_COORDINATOR_FOR_GROUP' });
  });
});

describe('the error table (the kafkajs patch)', () => {
  type ErrorEntry = { type: string; code: number; retriable: boolean; message?: string };
  const { errorCodes, createErrorFromCode } = require('kafkajs/src/protocol/error') as {
    errorCodes: ErrorEntry[];
    createErrorFromCode(code: number): Error & { type: string; code: number; retriable: boolean };
  };
  // kafkajs 2.2.4's own table (src/protocol/error.js before the patch: codes -1 to 88).
  const unpatched = require('./fixtures/kafkajs-2.2.4-error-codes.json') as ErrorEntry[];
  // Codes 89-136 as Apache Kafka 4.4.0 defines them: the table its Errors class prints
  // (java -cp '/opt/kafka/libs/*' org.apache.kafka.common.protocol.Errors in the broker image).
  const kafka44 = require('./fixtures/kafka-4.4.0-error-codes.json') as ErrorEntry[];

  it('reports PRODUCER_FENCED (90) by name, not retriable, and the runtime takes it for a fence', () => {
    const fenced = createErrorFromCode(90);
    expect(fenced).toMatchObject({ type: 'PRODUCER_FENCED', code: 90, retriable: false });
    expect(isFencedError(fenced)).toBe(true);
  });

  it('has every code Kafka 4.4 defines after 88, under its Kafka name and retriable as Kafka marks it', () => {
    expect(kafka44.map((e) => e.code)).toEqual(Array.from({ length: 136 - 89 + 1 }, (_, i) => 89 + i));
    for (const { type, code, retriable } of kafka44) {
      expect(createErrorFromCode(code)).toMatchObject({ type, code, retriable });
    }
    expect(createErrorFromCode(137)).toMatchObject({ type: 'KAFKAJS_UNKNOWN_ERROR_CODE', retriable: false });
  });

  it('leaves the codes kafkajs had as they were', () => {
    expect(
      errorCodes
        .filter((e) => e.code <= 88)
        .map(({ type, code, retriable, message }) => ({ type, code, retriable, message })),
    ).toEqual(unpatched);
  });

  it('takes no added code but PRODUCER_FENCED for a fence: TRANSACTION_ABORTABLE (120) aborts the transaction, the producer stays', () => {
    const fences = kafka44.filter(({ code }) => isFencedError(createErrorFromCode(code))).map((e) => e.type);
    expect(fences).toEqual(['PRODUCER_FENCED']);
    expect(createErrorFromCode(120)).toMatchObject({ type: 'TRANSACTION_ABORTABLE', retriable: false });
  });
});

describe('the version lookup (the kafkajs patch)', () => {
  const definition = { versions: ['0', '1', '3'], protocol: ({ version }: { version: number }) => version };
  const pick = (minVersion: number, maxVersion: number) => lookup({ 28: { minVersion, maxVersion } })(28, definition);

  it('picks the newest version both sides implement, across a gap in the implemented ones', () => {
    expect(pick(0, 5)).toBe(3);
    expect(pick(0, 3)).toBe(3);
    expect(pick(0, 2)).toBe(1);
  });

  it('refuses, naming both ranges, when the broker dropped every version implemented', () => {
    expect(() => pick(2, 2)).toThrow(KafkaJSServerDoesNotSupportApiKey);
    expect(() => pick(4, 6)).toThrow(
      'The Kafka server supports versions 4-6 of TxnOffsetCommit, none of which this client implements (0, 1, 3)',
    );
  });

  it('refuses an API the broker does not offer', () => {
    expect(() => lookup({})(28, definition)).toThrow('The Kafka server does not support the requested API version');
  });
});

describe('the patched broker calls', () => {
  const Broker = require('kafkajs/src/broker') as new (o: object) => {
    lookupRequest: unknown;
    txnOffsetCommit(a: object): Promise<unknown>;
    offsetFetch(a: object): Promise<unknown>;
  };
  const { createLogger, LEVELS } = require('kafkajs/src/loggers') as {
    createLogger(o: object): unknown;
    LEVELS: { NOTHING: number };
  };
  const oldBroker = () => {
    const versions = { 28: { minVersion: 0, maxVersion: 1 }, 9: { minVersion: 0, maxVersion: 6 } };
    const broker = new Broker({
      connectionPool: { connectionTimeout: 1000, host: 'x', port: 1 },
      logger: createLogger({ level: LEVELS.NOTHING, logCreator: () => () => undefined }),
      versions,
    });
    broker.lookupRequest = lookup(versions);
    return broker;
  };

  it('refuse to drop the generation or require_stable silently on a broker older than Kafka 2.5', async () => {
    const broker = oldBroker();
    await expect(
      broker.txnOffsetCommit({
        transactionalId: 't',
        groupId: 'g',
        producerId: 1,
        producerEpoch: 0,
        generationId: 3,
        memberId: 'm',
        topics: [],
      }),
    ).rejects.toThrow(
      "TxnOffsetCommit with the group generation needs version 3 (Kafka 2.5 or newer); the broker's newest shared version is 1",
    );
    await expect(broker.offsetFetch({ groupId: 'g', topics: [], requireStable: true })).rejects.toThrow(
      "OffsetFetch with require_stable needs version 7 (Kafka 2.5 or newer); the broker's newest shared version is 4",
    );
  });
});

describe('the patch and broker checks of kafka-runtime', () => {
  it('find the patch installed: the versions exactly-once v2 sends are implemented', () => {
    expect(implementedVersions('TxnOffsetCommit')).toEqual([0, 1, 3]);
    expect(implementedVersions('OffsetFetch')).toEqual([1, 2, 3, 4, 7]);
    expect(() => assertKafkajsPatched()).not.toThrow();
    expect(new KafkajsNotPatchedError('OffsetFetch version 7').message).toContain('patches/kafkajs@2.2.4.patch');
  });

  it('refuse a broker without TxnOffsetCommit v3 or OffsetFetch v7, naming the API and what it offers', () => {
    const kafka39 = {
      [API_KEYS.TxnOffsetCommit]: { minVersion: 0, maxVersion: 4 },
      [API_KEYS.OffsetFetch]: { minVersion: 0, maxVersion: 9 },
    };
    expect(() => assertEosV2Versions(kafka39, 'EXACTLY_ONCE=v2')).not.toThrow();
    const kafka24 = {
      [API_KEYS.TxnOffsetCommit]: { minVersion: 0, maxVersion: 2 },
      [API_KEYS.OffsetFetch]: { minVersion: 0, maxVersion: 6 },
    };
    expect(() => assertEosV2Versions(kafka24, 'EXACTLY_ONCE=v2')).toThrow(
      new BrokerTooOldError('TxnOffsetCommit', EOS_V2_VERSIONS.TxnOffsetCommit, 2, 'EXACTLY_ONCE=v2'),
    );
    expect(() => assertEosV2Versions({ [API_KEYS.TxnOffsetCommit]: kafka39[28] }, 'EXACTLY_ONCE=v2')).toThrow(
      'EXACTLY_ONCE=v2 needs OffsetFetch version 7 or newer (Apache Kafka 2.5+), but the broker offers no version of it',
    );
  });
});
