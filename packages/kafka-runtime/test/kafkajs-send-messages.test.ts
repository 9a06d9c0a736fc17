// kafkajs's producer/sendMessages as patched (patches/kafkajs@2.2.4.patch), against a fake
// cluster: no broker. What a transactional sendBatch must do when one broker's request fails and is
// retried while another's is still in flight, or when a partition's leader moves to a broker that
// already answered (kafkajs#1303); the processor's cluster test saw the first as every result of a
// transaction committed twice, back to back, the second as acknowledged records missing.

type Produce = (req: ProduceRequest) => Promise<ProduceResponse>;
interface ProduceRequest {
  /** The patch's signal from the connection: the request was never handed to the socket. */
  onNotWritten?: () => void;
  producerId: number;
  producerEpoch: number;
  topicData: Array<{
    topic: string;
    partitions: Array<{ partition: number; firstSequence: number; messages: Array<{ value: string }> }>;
  }>;
}
interface ProduceResponse {
  topics: Array<{ topicName: string; partitions: Array<{ partition: number; errorCode: number; baseOffset: string }> }>;
}
interface SentBatch {
  node: number;
  partition: number;
  firstSequence: number;
  values: string[];
}

const createSendMessages = require('kafkajs/src/producer/sendMessages') as (
  o: object,
) => (req: object) => Promise<Array<{ topicName: string; partition: number; baseOffset: string }>>;
const createEosManager = require('kafkajs/src/producer/eosManager') as (o: object) => {
  initProducerId(): Promise<void>;
  beginTransaction(): void;
};
const createRetry = require('kafkajs/src/retry') as (o: object) => unknown;
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as { createErrorFromCode(c: number): Error };
const { KafkaJSProtocolError, KafkaJSConnectionError } = require('kafkajs/src/errors') as {
  KafkaJSProtocolError: new (e: Error, o?: object) => Error;
  KafkaJSConnectionError: new (m: string, o?: object) => Error;
};

const TOPIC = 'out';
const CONCURRENT_TRANSACTIONS = 51;
const NOT_LEADER_FOR_PARTITION = 6;
const silent = { debug() {}, info() {}, warn() {}, error() {}, namespace: () => silent };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Two partitions, p0 led by node 1 and p1 by node 2 (leaders can move); produce per node as given. */
function fakeCluster(produce: Record<number, Produce>) {
  const leaders: Record<number, number> = { 0: 1, 1: 2 };
  const sent: SentBatch[] = [];
  const addPartitions: Array<(partitions: number[]) => Promise<void>> = [];
  const brokers = new Map<number, object>();
  const brokerFor = (nodeId: number) => {
    let b = brokers.get(nodeId);
    if (!b) {
      b = {
        nodeId,
        async produce(req: ProduceRequest) {
          for (const t of req.topicData) {
            for (const p of t.partitions) {
              sent.push({
                node: nodeId,
                partition: p.partition,
                firstSequence: p.firstSequence,
                values: p.messages.map((m) => m.value),
              });
            }
          }
          return produce[nodeId]!(req);
        },
      };
      brokers.set(nodeId, b);
    }
    return b;
  };
  const coordinator = {
    async initProducerId() {
      return { producerId: 7, producerEpoch: 0 };
    },
    async addPartitionsToTxn({ topics }: { topics: Array<{ partitions: number[] }> }) {
      const partitions = topics.flatMap((t) => t.partitions);
      const next = addPartitions.shift();
      if (next) await next(partitions);
    },
  };
  const cluster = {
    retry: { retries: 0 },
    targetTopics: new Set([TOPIC]),
    async refreshMetadataIfNecessary() {},
    async refreshMetadata() {},
    async addMultipleTargetTopics() {},
    isConnected: () => true,
    removeBroker() {},
    findTopicPartitionMetadata: () => [0, 1].map((partitionId) => ({ partitionId, leader: leaders[partitionId] })),
    findLeaderForPartitions(_topic: string, partitions: Array<string | number>) {
      const out: Record<number, number[]> = {};
      for (const p of partitions.map(Number)) (out[leaders[p]!] ??= []).push(p);
      return out;
    },
    async findBroker({ nodeId }: { nodeId: string | number }) {
      return brokerFor(Number(nodeId));
    },
    async findGroupCoordinator() {
      return coordinator;
    },
  };
  return { cluster, leaders, sent, addPartitions };
}

async function setUp(produce: Record<number, Produce>) {
  const fake = fakeCluster(produce);
  const eosManager = createEosManager({
    logger: silent,
    cluster: fake.cluster,
    transactional: true,
    transactionalId: 'tx',
  });
  await eosManager.initProducerId();
  eosManager.beginTransaction();
  const sendMessages = createSendMessages({
    logger: silent,
    cluster: fake.cluster,
    partitioner: ({ message }: { message: { partition: number } }) => message.partition,
    eosManager,
    retrier: createRetry({ retries: 5, initialRetryTime: 10, maxRetryTime: 50 }),
  });
  const send = (values: Record<number, string[]>) =>
    sendMessages({
      acks: -1,
      topicMessages: [
        {
          topic: TOPIC,
          messages: Object.entries(values).flatMap(([p, vs]) => vs.map((value) => ({ partition: Number(p), value }))),
        },
      ],
    });
  return { ...fake, send, sendMessages };
}

const ok =
  (delayMs = 0): Produce =>
  async (req) => {
    if (delayMs) await sleep(delayMs);
    return {
      topics: req.topicData.map((t) => ({
        topicName: t.topic,
        partitions: t.partitions.map((p) => ({
          partition: p.partition,
          errorCode: 0,
          baseOffset: String(p.firstSequence),
        })),
      })),
    };
  };

/** What a broker that dedupes by (producer, sequence) would hold: each partition's accepted batches. */
function brokerLog(sent: SentBatch[]): Map<number, string[]> {
  const seen = new Set<string>();
  const log = new Map<number, string[]>();
  for (const s of sent) {
    const id = `${s.partition}:${s.firstSequence}`;
    if (seen.has(id)) continue; // a retry of a batch the broker has: answered with the first's offset
    seen.add(id);
    log.set(s.partition, [...(log.get(s.partition) ?? []), ...s.values]);
  }
  return log;
}

describe('kafkajs sendMessages (patched): every partition once, one sequence range per batch', () => {
  it('does not send a partition again while its first request is still in flight', async () => {
    // AddPartitionsToTxn for p0 answers CONCURRENT_TRANSACTIONS (the previous transaction's
    // markers are being written); p1's produce is slow (acks=all waiting on a follower): the retry
    // comes while p1's request is unanswered.
    const { send, sent, addPartitions } = await setUp({ 1: ok(), 2: ok(150) });
    let first = true;
    addPartitions.push(async (partitions) => {
      if (first && partitions.includes(0)) {
        first = false;
        throw createErrorFromCode(CONCURRENT_TRANSACTIONS);
      }
    });
    addPartitions.push(
      async () => {},
      async () => {},
    );
    const reply = await send({ 0: ['a0', 'a1'], 1: ['b0', 'b1', 'b2'] });

    expect(brokerLog(sent)).toEqual(
      new Map([
        [0, ['a0', 'a1']],
        [1, ['b0', 'b1', 'b2']],
      ]),
    );
    expect(reply.map((r) => r.partition).sort()).toEqual([0, 1]);
  });

  it('sends a partition whose leader moved to a broker that already answered (kafkajs#1303)', async () => {
    const { send, sent, leaders } = await setUp({
      1: async () => {
        leaders[0] = 2; // the metadata refresh after the error names node 2
        throw new KafkaJSProtocolError(createErrorFromCode(NOT_LEADER_FOR_PARTITION));
      },
      2: ok(),
    });
    const reply = await send({ 0: ['a0'], 1: ['b0'] });

    expect(brokerLog(sent)).toEqual(
      new Map([
        [0, ['a0']],
        [1, ['b0']],
      ]),
    );
    expect(reply.map((r) => `${r.partition}@${r.baseOffset}`).sort()).toEqual(['0@0', '1@0']);
    // p0 went to node 2 under the sequence it had on node 1: a broker that got it first dedupes it.
    expect(sent.filter((s) => s.partition === 0).map((s) => [s.node, s.firstSequence])).toEqual([
      [1, 0],
      [2, 0],
    ]);
  });

  it('never gives a sequence range that may have been written to other records', async () => {
    // Node 1 gets the request and then the connection drops: the batch may be in its log.
    let calls = 0;
    const { send, sent } = await setUp({
      1: async () => {
        calls++;
        throw new KafkaJSConnectionError('Connection error: connect ECONNREFUSED', { host: 'h', port: 1 });
      },
      2: ok(),
    });
    await expect(send({ 0: ['a0', 'a1'] })).rejects.toThrow();
    expect(calls).toBeGreaterThan(1);
    const sequences = new Set(sent.map((s) => s.firstSequence));
    expect(sequences).toEqual(new Set([0])); // every retry the same range

    // The next send to p0 on the same epoch must not reuse 0..1 for different records.
    sent.length = 0;
    await expect(send({ 0: ['c0'] })).rejects.toThrow();
    expect(sent.every((s) => s.firstSequence >= 2)).toBe(true);
  });

  it('gives a sequence range back after a send no request of which reached the broker: the next send starts there', async () => {
    // Node 1 is unreachable: every attempt fails before the request is written (not connected).
    let reachable = false;
    const { send, sent } = await setUp({
      1: async (req) => {
        if (reachable) return ok()(req);
        req.onNotWritten?.();
        throw new KafkaJSConnectionError('Not connected', { broker: 'h:1' });
      },
      2: ok(),
    });
    await expect(send({ 0: ['a0', 'a1'] })).rejects.toThrow();
    expect(new Set(sent.map((s) => s.firstSequence))).toEqual(new Set([0])); // every retry the same range

    sent.length = 0;
    reachable = true;
    const reply = await send({ 0: ['c0'] });
    expect(sent.map((s) => [s.partition, s.firstSequence, s.values])).toEqual([[0, 0, ['c0']]]);
    expect(reply.map((r) => r.partition)).toEqual([0]);
  });

  it('keeps a range once any request carrying it may have been written, even if a later retry never was', async () => {
    let calls = 0;
    const { send, sent } = await setUp({
      1: async (req) => {
        calls++;
        // The first request is written and the connection drops; the retries never get written.
        if (calls > 1) req.onNotWritten?.();
        throw new KafkaJSConnectionError(calls > 1 ? 'Not connected' : 'Connection error: read ECONNRESET', {
          broker: 'h:1',
        });
      },
      2: ok(),
    });
    await expect(send({ 0: ['a0', 'a1'] })).rejects.toThrow();
    expect(calls).toBeGreaterThan(1);
    sent.length = 0;
    await expect(send({ 0: ['c0'] })).rejects.toThrow();
    expect(sent.every((s) => s.firstSequence === 2)).toBe(true);
  });

  it('does not report a partition the broker left out of its reply as written: it is sent again under its range', async () => {
    let replies = 0;
    const { send, sent } = await setUp({
      1: ok(),
      2: async (req) => {
        const reply = await ok()(req);
        if (replies++ === 0) reply.topics[0]!.partitions = []; // the first reply names no partition
        return reply;
      },
    });
    const reply = await send({ 0: ['a0'], 1: ['b0', 'b1'] });
    expect(reply.map((r) => r.partition).sort()).toEqual([0, 1]);
    expect(sent.filter((s) => s.partition === 1).map((s) => [s.node, s.firstSequence])).toEqual([
      [2, 0],
      [2, 0],
    ]);
    expect(brokerLog(sent).get(1)).toEqual(['b0', 'b1']);

    // A broker that never answers for the partition: the send fails, it never reports p1 written.
    const never = await setUp({
      1: ok(),
      2: async (req) => ({ ...(await ok()(req)), topics: [] }),
    });
    await expect(never.send({ 0: ['a0'], 1: ['b0'] })).rejects.toThrow(/No answer for partitions out-1/);
  });

  it('sends a topic listed twice in one sendBatch as one topic: every message once, in the order given', async () => {
    const requests: ProduceRequest[] = [];
    const record: Produce = async (req) => {
      requests.push(req);
      return ok()(req);
    };
    const { sendMessages, sent } = await setUp({ 1: record, 2: record });
    await sendMessages({
      acks: -1,
      topicMessages: [
        {
          topic: TOPIC,
          messages: [
            { partition: 0, value: 'a0' },
            { partition: 1, value: 'b0' },
          ],
        },
        { topic: TOPIC, messages: [{ partition: 0, value: 'a1' }] },
      ],
    });
    // One batch per partition, each sent once under one range (before: a second batch of partition 0
    // in the same request, of which only one was answered and written).
    expect(sent.map(({ partition, firstSequence, values }) => ({ partition, firstSequence, values }))).toEqual([
      { partition: 0, firstSequence: 0, values: ['a0', 'a1'] },
      { partition: 1, firstSequence: 0, values: ['b0'] },
    ]);
    expect(requests.flatMap((r) => r.topicData.map((t) => t.partitions.length))).toEqual([1, 1]);
  });

  it('keeps the produce request of a normal send as it was: one request per leader, sequences from 0', async () => {
    const requests: ProduceRequest[] = [];
    const record: Produce = async (req) => {
      requests.push(req);
      return ok()(req);
    };
    const { send } = await setUp({ 1: record, 2: record });
    await send({ 0: ['a0', 'a1'], 1: ['b0'] });
    await send({ 0: ['a2'] });
    expect(
      requests.map(({ producerId, producerEpoch, topicData }) => ({ producerId, producerEpoch, topicData })),
    ).toEqual([
      {
        producerId: 7,
        producerEpoch: 0,
        topicData: [
          {
            topic: TOPIC,
            partitions: [
              {
                partition: 0,
                firstSequence: 0,
                messages: [
                  { partition: 0, value: 'a0' },
                  { partition: 0, value: 'a1' },
                ],
              },
            ],
          },
        ],
      },
      {
        producerId: 7,
        producerEpoch: 0,
        topicData: [
          { topic: TOPIC, partitions: [{ partition: 1, firstSequence: 0, messages: [{ partition: 1, value: 'b0' }] }] },
        ],
      },
      {
        producerId: 7,
        producerEpoch: 0,
        topicData: [
          { topic: TOPIC, partitions: [{ partition: 0, firstSequence: 2, messages: [{ partition: 0, value: 'a2' }] }] },
        ],
      },
    ]);
  });
});

describe('the connection tells the producer when a produce request was never written (the kafkajs patch)', () => {
  const { EventEmitter } = require('events') as typeof import('events');
  const Broker = require('kafkajs/src/broker') as new (o: object) => {
    lookupRequest: unknown;
    produce(a: object): Promise<unknown>;
  };
  const ConnectionPool = require('kafkajs/src/network/connectionPool') as new (o: object) => object;
  const { lookup } = require('kafkajs/src/protocol/requests') as { lookup(v: object): unknown };
  const { createLogger, LEVELS } = require('kafkajs/src/loggers') as {
    createLogger(o: object): unknown;
    LEVELS: { NOTHING: number };
  };

  /** A Broker over kafkajs's ConnectionPool and Connection, on a socket of the test's own. */
  function brokerOn(socketBehaviour: 'refuse' | 'close-after-write') {
    const written: Buffer[] = [];
    const socketFactory = ({ onConnect }: { onConnect: () => void }) => {
      const socket = Object.assign(new EventEmitter(), {
        write(buffer: Buffer) {
          written.push(buffer);
          setImmediate(() => socket.emit('end'));
          return true;
        },
        end() {},
        unref() {},
      });
      setImmediate(() =>
        socketBehaviour === 'refuse'
          ? socket.emit('error', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))
          : onConnect(),
      );
      return socket;
    };
    const logger = createLogger({ level: LEVELS.NOTHING, logCreator: () => () => undefined });
    const versions = { 0: { minVersion: 3, maxVersion: 7 } };
    const broker = new Broker({
      connectionPool: new ConnectionPool({
        host: 'h',
        port: 1,
        logger,
        socketFactory,
        connectionTimeout: 1000,
        requestTimeout: 1000,
      }),
      logger,
      versions,
    });
    broker.lookupRequest = lookup(versions);
    return { broker, written };
  }
  const produce = (broker: { produce(a: object): Promise<unknown> }, onNotWritten: () => void) =>
    broker.produce({
      producerId: 7,
      producerEpoch: 0,
      acks: -1,
      topicData: [{ topic: TOPIC, partitions: [{ partition: 0, firstSequence: 0, messages: [{ value: 'a0' }] }] }],
      onNotWritten,
    });

  it('says so when the connection failed before the request was written', async () => {
    const { broker, written } = brokerOn('refuse');
    const onNotWritten = jest.fn();
    await expect(produce(broker, onNotWritten)).rejects.toMatchObject({ name: 'KafkaJSConnectionError' });
    expect(written).toHaveLength(0);
    expect(onNotWritten).toHaveBeenCalledTimes(1);
  });

  it('says nothing when the request was written and the connection closed before the answer', async () => {
    const { broker, written } = brokerOn('close-after-write');
    const onNotWritten = jest.fn();
    await expect(produce(broker, onNotWritten)).rejects.toMatchObject({ name: 'KafkaJSConnectionClosedError' });
    expect(written).toHaveLength(1);
    expect(onNotWritten).not.toHaveBeenCalled();
  });
});
