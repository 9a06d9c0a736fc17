import fc from 'fast-check';

// kafkajs's produce path as patched (patches/kafkajs@2.2.4.patch), issue 32: a headers object is
// encoded once, not per record (src/protocol/recordBatch/record/v0), and messages are grouped per
// partition in linear time (src/producer/groupMessagesPerPartition.js, the lookups per batch in
// src/producer/sendMessages.js). The bytes must be kafkajs 2.2.4's, byte for byte: whole Produce
// v7 requests are encoded through the patched record encoder and through a copy of the published
// one (test/fixtures/kafkajs-2.2.4-record-v0.js, put in its place with jest.doMock) and compared.

interface Message {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  partition?: number;
  timestamp?: string;
  headers?: Record<string, unknown>;
}
interface TopicData {
  topic: string;
  partitions: Array<{ partition: number; firstSequence?: number; messages: Message[] }>;
}
interface ProduceArgs {
  acks: number;
  timeout: number;
  transactionalId?: string;
  producerId?: number;
  producerEpoch?: number;
  compression?: number;
  topicData: TopicData[];
}
type ProduceRequest = (args: ProduceArgs) => { encode(): Promise<{ buffer: Buffer }> };
type RecordEncoder = (r: object) => { buffer: Buffer };
type Grouping = (o: {
  topic: string;
  partitionMetadata: unknown[];
  messages: Message[];
  partitioner: (o: { message: Message }) => number;
}) => Record<string, Message[]>;

const RECORD_V0 = 'kafkajs/src/protocol/recordBatch/record/v0';
const PRODUCE_V7 = 'kafkajs/src/protocol/requests/produce/v7/request';
const newRecord = require(RECORD_V0) as RecordEncoder;
const oldRecord = require('./fixtures/kafkajs-2.2.4-record-v0') as RecordEncoder;
const newProduce = require(PRODUCE_V7) as ProduceRequest;
const oldGrouping = require('./fixtures/kafkajs-2.2.4-group-messages-per-partition') as Grouping;
const newGrouping = require('kafkajs/src/producer/groupMessagesPerPartition') as Grouping;

/** Produce v7 as kafkajs 2.2.4 encodes it: the same modules, the published record encoder. */
let oldProduce: ProduceRequest;
jest.isolateModules(() => {
  jest.doMock(require.resolve(RECORD_V0), () => oldRecord);
  oldProduce = require(PRODUCE_V7) as ProduceRequest;
  jest.dontMock(require.resolve(RECORD_V0));
});

const NOW = 1_765_000_000_000;
beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(NOW));
afterEach(() => jest.restoreAllMocks());

async function encodeBoth(args: ProduceArgs): Promise<{ before: Buffer; after: Buffer }> {
  const before = (await oldProduce(args).encode()).buffer;
  const after = (await newProduce(args).encode()).buffer;
  return { before, after };
}

async function expectSameBytes(args: ProduceArgs): Promise<Buffer> {
  const { before, after } = await encodeBoth(args);
  expect(after.equals(before)).toBe(true);
  // Encoded again, every headers object is now a cache hit: still the same bytes.
  expect((await newProduce(args).encode()).buffer.equals(before)).toBe(true);
  return after;
}

const txn = { acks: -1, timeout: 30000, transactionalId: 'processor-0', producerId: 7, producerEpoch: 3 };

describe('the record encoder, headers encoded once (Produce v7 bytes against kafkajs 2.2.4)', () => {
  it('the old path is the published encoder (a sanity check of the fixture and the mock)', () => {
    expect(oldRecord).not.toBe(newRecord);
    expect(String(oldRecord)).toContain('headersArray.map(Header)');
    expect(String(newRecord)).not.toContain('headersArray.map(Header)');
  });

  it("encodes the processor's transaction alike: changelog records sharing a unit's headers, results without", async () => {
    const perTask = [0, 1, 2, 3].map((task) => ({
      'sr.input-positions': `commands=${100 + task},events=${900 + task}`,
    }));
    const changelog: TopicData = { topic: 'changelog', partitions: [] };
    const results: TopicData = { topic: 'results', partitions: [] };
    for (let task = 0; task < 4; task++) {
      const messages: Message[] = [];
      const answers: Message[] = [];
      for (let i = 0; i < 50; i++) {
        const key = `account-${task}-${i}`;
        messages.push({ key, value: i % 7 === 0 ? null : Buffer.alloc(160, i), headers: perTask[task] });
        answers.push({ key: Buffer.from(`cmd-${key}`), value: Buffer.alloc(250, i) });
      }
      changelog.partitions.push({ partition: task, firstSequence: task * 50, messages });
      results.partitions.push({ partition: task + 4, firstSequence: 0, messages: answers });
    }
    const bytes = await expectSameBytes({ ...txn, topicData: [changelog, results] });
    expect(bytes.length).toBeGreaterThan(4 * 50 * (160 + 250));
  });

  it('encodes headers of every shape alike, shared and distinct objects, and records without headers', async () => {
    const shared = { a: 'x', b: Buffer.from([0, 1, 2]), c: ['one', Buffer.from('two')] };
    const messages: Message[] = [
      { key: 'k0', value: 'v0' },
      { key: 'k1', value: 'v1', headers: {} },
      { key: 'k2', value: 'v2', headers: shared },
      { key: null, value: null, headers: shared },
      { value: Buffer.alloc(0), headers: { ...shared } }, // equal content, another object
      { key: 'k4', value: 'v4', headers: { '2': 'int-like keys', '10': 'come first', z: '', é: 'ünïcödé ✓' } },
      { key: 'k5', value: 'v5', headers: { many: Array.from({ length: 70 }, (_, i) => `v${i}`) } },
      { key: 'k6', value: Buffer.alloc(70_000, 1), headers: { big: Buffer.alloc(20_000, 2), empty: [] } },
      { key: Buffer.alloc(0), value: 'v7', headers: shared },
      { key: 'k8', value: 'v8', headers: { u8: new Uint8Array([1, 2, 3]) } }, // not cached: kafkajs writes String()
    ];
    await expectSameBytes({ ...txn, topicData: [{ topic: 't', partitions: [{ partition: 0, messages }] }] });
    // The same objects again, in another order, on two partitions of two topics.
    const reversed = [...messages].reverse();
    await expectSameBytes({
      acks: 1,
      timeout: 1000,
      topicData: [
        { topic: 'u', partitions: [{ partition: 3, messages: reversed }] },
        {
          topic: 't',
          partitions: [
            { partition: 1, messages: messages.slice(2, 5) },
            { partition: 0, messages },
          ],
        },
      ],
    });
  });

  it('encodes timestamps alike: given (as strings), missing (Date.now) and out of order', async () => {
    const headers = { h: 'v' };
    const messages: Message[] = [
      { key: 'a', value: '1', timestamp: String(NOW - 5000), headers },
      { key: 'b', value: '2', headers },
      { key: 'c', value: '3', timestamp: String(NOW - 10_000_000), headers },
      { key: 'd', value: '4', timestamp: String(NOW + 3_000_000_000), headers }, // delta past 2^31
    ];
    await expectSameBytes({ ...txn, topicData: [{ topic: 't', partitions: [{ partition: 0, messages }] }] });
  });

  it('encodes many partitions alike', async () => {
    const headerObjects = Array.from({ length: 5 }, (_, i) => ({ n: String(i), pos: 'x'.repeat(i * 40) }));
    const topicData: TopicData[] = ['a', 'b'].map((topic) => ({
      topic,
      partitions: Array.from({ length: 64 }, (_, partition) => ({
        partition,
        firstSequence: partition * 3,
        messages: Array.from({ length: 1 + (partition % 5) }, (_, i) => ({
          key: i % 3 === 0 ? null : `${topic}-${partition}-${i}`,
          value: i % 4 === 1 ? null : Buffer.alloc(i * 37, partition),
          ...(i % 2 === 0 && { headers: headerObjects[(partition + i) % 5] }),
        })),
      })),
    }));
    await expectSameBytes({ ...txn, topicData });
  });

  it('encodes any records alike (property)', async () => {
    const bytes = fc.oneof(
      fc.string(),
      fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
    );
    const headerValue = fc.oneof(bytes, fc.array(bytes, { maxLength: 3 }));
    const headersObject = fc.dictionary(fc.string({ maxLength: 8 }), headerValue, { maxKeys: 4 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(headersObject, { minLength: 1, maxLength: 4 }),
        fc.array(
          fc.record(
            {
              key: fc.option(bytes),
              value: fc.option(bytes),
              headers: fc.option(fc.nat(3), { nil: undefined }),
              timestamp: fc.option(fc.integer({ min: -100_000, max: 100_000 }), { nil: undefined }),
              partition: fc.nat(5),
            },
            { requiredKeys: ['value', 'partition'] },
          ),
          { maxLength: 40 },
        ),
        async (headerObjects, records) => {
          const perPartition = new Map<number, Message[]>();
          for (const r of records) {
            const m: Message = {
              ...(r.key !== undefined && { key: r.key }),
              value: r.value,
              ...(r.headers !== undefined && { headers: headerObjects[r.headers % headerObjects.length] }),
              ...(r.timestamp !== undefined && { timestamp: String(NOW + r.timestamp) }),
            };
            perPartition.set(r.partition, [...(perPartition.get(r.partition) ?? []), m]);
          }
          const partitions = [...perPartition].map(([partition, messages]) => ({ partition, messages }));
          const { before, after } = await encodeBoth({ ...txn, topicData: [{ topic: 't', partitions }] });
          expect(after.equals(before)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('writes the protocol layout (kafka.apache.org/protocol, Record v2): a record with a header', () => {
    const record = newRecord({ offsetDelta: 2, timestampDelta: 5, key: 'k', value: 'val', headers: { h: 'v' } });
    // length 14 (zigzag 28); attributes 0; timestampDelta 5 (zigzag 10); offsetDelta 2 (zigzag 4); key 1 byte;
    // value 3 bytes; 1 header: key 1 byte, value 1 byte. Varints are zigzag: n is written 2n.
    const expected = Buffer.from([28, 0, 10, 4, 2, 0x6b, 6, 0x76, 0x61, 0x6c, 2, 2, 0x68, 2, 0x76]);
    expect(record.buffer).toEqual(expected);
    expect(
      newRecord({ key: 'k', value: 'val', headers: { h: 'v' }, offsetDelta: 2, timestampDelta: 5 }).buffer,
    ).toEqual(expected);
  });
});

describe('the headers cache: used only while the object is unchanged (the rule)', () => {
  const encodeBothRecords = (headers: unknown) => ({
    before: oldRecord({ key: 'k', value: 'v', headers }).buffer,
    after: newRecord({ key: 'k', value: 'v', headers }).buffer,
  });
  const expectCurrentBytes = (headers: unknown) => {
    const { before, after } = encodeBothRecords(headers);
    expect(after.toString('hex')).toBe(before.toString('hex'));
  };

  it('encodes a headers object again after any change to it, never stale bytes', () => {
    const buf = Buffer.from('abc');
    const list = ['a', Buffer.from('b')];
    const headers: Record<string, unknown> = { one: '1', buf, list };
    const changes: Array<() => void> = [
      () => (headers.one = '2'), // a value replaced
      () => (headers.two = 'added'), // a key added
      () => delete headers.two, // a key removed
      () => {
        delete headers.one; // the same keys in another order
        headers.one = '2';
      },
      () => buf.write('xyz'), // a Buffer's bytes changed in place
      () => (headers.buf = Buffer.from('xyz')), // another Buffer, the same bytes: still right
      () => list.push('c'), // an array grown
      () => (list[0] = 'A'), // an element replaced
      () => ((list[1] as Buffer)[0] = 0x42), // a Buffer inside an array changed in place
      () => (headers.list = 'no longer an array'),
      () => (headers.u8 = new Uint8Array([1])), // a value the cache does not hold
      () => delete headers.u8, // cacheable again
    ];
    expectCurrentBytes(headers);
    for (const change of changes) {
      change();
      expectCurrentBytes(headers);
      expectCurrentBytes(headers); // the second time from the cache
    }
  });

  it('throws as kafkajs did for headers it cannot encode, and caches nothing for them', () => {
    for (const headers of [null, { n: null }, { n: undefined }, { n: 5 }, { list: ['a', null] }]) {
      const errorOf = (encode: RecordEncoder) => {
        try {
          encode({ key: 'k', value: 'v', headers });
        } catch (e) {
          return `${(e as Error).name}: ${(e as Error).message}`;
        }
        return 'no error';
      };
      const before = errorOf(oldRecord);
      expect(before).toMatch(/^TypeError: /);
      expect(errorOf(newRecord)).toBe(before);
      expect(errorOf(newRecord)).toBe(before);
    }
  });

  it("encodes a headers object once for all its records (the processor's use: one per unit, never changed)", () => {
    // transaction.ts builds one headers object per unit's changelog records and never changes it
    // (nor do packages/kafka-runtime's callers); fold.ts's results have none.
    const HEADER_V0 = 'kafkajs/src/protocol/recordBatch/header/v0';
    const Header = jest.requireActual(HEADER_V0) as (h: object) => unknown;
    const encoded: unknown[] = [];
    let record!: RecordEncoder;
    jest.isolateModules(() => {
      jest.doMock(require.resolve(HEADER_V0), () => (h: object) => (encoded.push(h), Header(h)));
      record = require(RECORD_V0) as RecordEncoder;
    });
    jest.dontMock(require.resolve(HEADER_V0));
    const unit = { 'sr.input-positions': 'commands=1,events=2', other: ['a', 'b'] };
    const changelog = Array.from({ length: 100 }, (_, i) => record({ key: `k${i}`, value: 'x', headers: unit }).buffer);
    const results = Array.from({ length: 100 }, (_, i) => record({ key: `k${i}`, value: 'r' }).buffer);
    expect(encoded).toHaveLength(3); // each header of the object once, not 300 times
    changelog.forEach((b, i) => expect(b).toEqual(oldRecord({ key: `k${i}`, value: 'x', headers: unit }).buffer));
    results.forEach((b, i) => expect(b).toEqual(oldRecord({ key: `k${i}`, value: 'r' }).buffer));
  });
});

describe('groupMessagesPerPartition, linear (against kafkajs 2.2.4)', () => {
  const partitionMetadata = Array.from({ length: 64 }, (_, partitionId) => ({ partitionId, leader: 1 }));

  it('groups alike: the same partitions, in the same key order, each with its messages in order', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(63), { maxLength: 300 }), (partitions) => {
        const messages: Message[] = partitions.map((partition, i) => ({ value: String(i), partition }));
        const args = {
          topic: 't',
          partitionMetadata,
          messages,
          partitioner: ({ message }: { message: Message }) => message.partition!,
        };
        const before = oldGrouping(args);
        const after = newGrouping(args);
        expect(Object.keys(after)).toEqual(Object.keys(before));
        for (const p of Object.keys(before)) {
          expect(after[p]!.length).toBe(before[p]!.length);
          after[p]!.forEach((m, i) => expect(m).toBe(before[p]![i]));
        }
      }),
    );
    expect(
      newGrouping({ topic: 't', partitionMetadata: [], messages: [{ value: 'x' }], partitioner: () => 0 }),
    ).toEqual({});
  });

  it('groups 300,000 messages of one partition in linear time (kafkajs copied the array per message)', () => {
    const messages: Message[] = Array.from({ length: 300_000 }, (_, i) => ({ value: String(i) }));
    const started = performance.now();
    const grouped = newGrouping({ topic: 't', partitionMetadata, messages, partitioner: () => 7 });
    // Quadratic, this is 4.5e10 element copies (minutes); linear, milliseconds (bound for a loaded machine).
    expect(performance.now() - started).toBeLessThan(3000);
    expect(grouped['7']).toHaveLength(300_000);
    expect(grouped['7']![299_999]).toBe(messages[299_999]);
  });
});

describe('the default partitioner, partitions with a leader listed only when used (against kafkajs 2.2.4)', () => {
  type Partitioner = (o: { topic: string; partitionMetadata: unknown[]; message: Message }) => number;
  type Factory = (murmur2: unknown) => () => Partitioner;
  const RANDOM_BYTES = 'kafkajs/src/producer/partitioners/legacy/randomBytes';
  const murmur2 = require('kafkajs/src/producer/partitioners/default/murmur2') as unknown;

  /** The old and the new partitioner, their round-robin counters seeded alike. */
  const pair = (seed: number) => {
    let created!: { before: Partitioner; after: Partitioner };
    jest.isolateModules(() => {
      jest.doMock(require.resolve(RANDOM_BYTES), () => (n: number) => {
        const b = Buffer.alloc(n);
        b.writeUInt32BE(seed);
        return b;
      });
      created = {
        before: (require('./fixtures/kafkajs-2.2.4-legacy-partitioner') as Factory)(murmur2)(),
        after: (require('kafkajs/src/producer/partitioners/legacy/partitioner') as Factory)(murmur2)(),
      };
      jest.dontMock(require.resolve(RANDOM_BYTES));
    });
    return created;
  };

  it('places every message alike: given partitions, keys (murmur2), round robin over the partitions with a leader', () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.array(fc.integer({ min: -1, max: 3 }), { minLength: 1, maxLength: 12 }),
        fc.array(
          fc.record({
            partition: fc.option(fc.nat(11), { nil: undefined }),
            key: fc.option(
              fc.oneof(
                fc.string(),
                fc.uint8Array().map((a) => Buffer.from(a)),
              ),
            ),
            topic: fc.constantFrom('a', 'b'),
          }),
          { maxLength: 60 },
        ),
        (seed, leaders, messages) => {
          const partitionMetadata = leaders.map((leader, partitionId) => ({ partitionId, leader }));
          const { before, after } = pair(seed);
          for (const { topic, ...message } of messages) {
            const m = message as Message;
            expect(after({ topic, partitionMetadata, message: m })).toBe(
              before({ topic, partitionMetadata, message: m }),
            );
          }
        },
      ),
    );
  });
});

describe('sendMessages, lookups per partition through Maps (many partitions)', () => {
  const createSendMessages = require('kafkajs/src/producer/sendMessages') as (
    o: object,
  ) => (req: object) => Promise<Array<{ topicName: string; partition: number; baseOffset: string }>>;
  const createRetry = require('kafkajs/src/retry') as (o: object) => unknown;
  const silent = { debug() {}, info() {}, warn() {}, error() {}, namespace: () => silent };

  it('sends each partition once to its leader, in order, and matches each answer to its partition', async () => {
    const TOPICS = ['a', 'b'];
    const leaderOf = (partition: number) => 1 + (partition % 3);
    const metadata = Array.from({ length: 64 }, (_, partitionId) => ({ partitionId, leader: leaderOf(partitionId) }));
    const sent: Array<{ node: number; topic: string; partition: number; firstSequence: number; values: unknown[] }> =
      [];
    let leftOut = true;
    const broker = (nodeId: number) => ({
      nodeId,
      async produce({ topicData }: { topicData: TopicData[] }) {
        for (const t of topicData) {
          for (const p of t.partitions) {
            sent.push({
              node: nodeId,
              topic: t.topic,
              partition: p.partition,
              firstSequence: p.firstSequence!,
              values: p.messages.map((m) => m.value),
            });
          }
        }
        return {
          topics: topicData.map(({ topic, partitions }) => ({
            topicName: topic,
            partitions: partitions
              // The first reply of node 3 leaves b-5 out: it is sent again, under the same range.
              .filter(({ partition }) => !(leftOut && nodeId === 3 && topic === 'b' && partition === 5))
              .reverse() // in another order than asked
              .map(({ partition }) => ({
                partition,
                errorCode: 0,
                baseOffset: `${topic === 'a' ? 1000 : 2000}${partition}`,
              })),
          })),
        };
      },
    });
    const brokers = new Map([1, 2, 3].map((n) => [n, broker(n)]));
    const sequences = new Map<string, number>();
    const seq = (topic: string, partition: number) => sequences.get(`${topic}-${partition}`) ?? 0;
    const sendMessages = createSendMessages({
      logger: silent,
      cluster: {
        async refreshMetadataIfNecessary() {},
        async refreshMetadata() {},
        isConnected: () => true,
        async addMultipleTargetTopics() {},
        findTopicPartitionMetadata: () => metadata,
        findLeaderForPartitions: (_topic: string, partitions: number[]) => {
          const perLeader: Record<number, number[]> = {};
          for (const p of partitions) (perLeader[leaderOf(p)] ??= []).push(p);
          return perLeader;
        },
        findBroker: async ({ nodeId }: { nodeId: string }) => brokers.get(Number(nodeId)),
      },
      partitioner: ({ message }: { message: Message }) => message.partition,
      eosManager: {
        isTransactional: () => true,
        getTransactionalId: () => 'tx',
        getProducerId: () => 7,
        getProducerEpoch: () => 0,
        getSequence: seq,
        updateSequence: (topic: string, partition: number, n: number) =>
          sequences.set(`${topic}-${partition}`, seq(topic, partition) + n),
        releaseSequence: () => false,
        async addPartitionsToTransaction() {
          if (sent.length > 0) leftOut = false; // the retry
        },
        async acquireBrokerLock() {},
        async releaseBrokerLock() {},
      },
      retrier: createRetry({ retries: 2, initialRetryTime: 1, maxRetryTime: 5 }),
    });

    // 1,000 messages per topic over the 64 partitions, in a scrambled order.
    const topicMessages = TOPICS.map((topic) => ({
      topic,
      messages: Array.from({ length: 1000 }, (_, i) => ({ value: `${topic}${i}`, partition: (i * 37) % 64 })),
    }));
    const answers = await sendMessages({ acks: -1, timeout: 1000, topicMessages });

    expect(answers).toHaveLength(128);
    for (const topic of TOPICS) {
      for (let partition = 0; partition < 64; partition++) {
        const answer = answers.filter((a) => a.topicName === topic && a.partition === partition);
        expect(answer).toHaveLength(1);
        expect(answer[0]!.baseOffset).toBe(`${topic === 'a' ? 1000 : 2000}${partition}`);
        const expected = topicMessages
          .find((t) => t.topic === topic)!
          .messages.filter((m) => m.partition === partition)
          .map((m) => m.value);
        const sends = sent.filter((s) => s.topic === topic && s.partition === partition);
        expect(sends).toHaveLength(topic === 'b' && partition === 5 ? 2 : 1);
        for (const s of sends) {
          expect(s.node).toBe(leaderOf(partition));
          expect(s.values).toEqual(expected);
          expect(s.firstSequence).toBe(0);
        }
      }
    }
  });
});
