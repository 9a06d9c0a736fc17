import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Kafka,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSOffsetOutOfRange,
  logLevel,
  type Producer,
} from 'kafkajs';
import {
  KafkajsShapeError,
  RECORD_REJECTED_TYPES,
  UnsupportedKafkajsError,
  isFencedError,
  recordRejection,
} from '../src/errors';
import { withCoordinatorCache } from '../src/coordinator-cache';
import { PartitionReader } from '../src/partition-reader';
import {
  CONSUMER_NOT_RUNNING_MESSAGE,
  CREATE_CLUSTER_SYMBOL,
  READ_COMMITTED,
  SUPPORTED_KAFKAJS_VERSION,
  TOPIC_FETCHER_CLUSTER_METHODS,
  assertSupportedKafkajs,
  batchReader,
  causes,
  hasProducerFencedMessage,
  installedKafkajsVersion,
  interceptClientCreation,
  isConsumerNotRunningError,
  kafkaErrorType,
  offsetOutOfRangePartition,
  openTopicFetcher,
  withCoordinatorLookup,
  withTargetTopics,
  type FetchPartitionData,
} from '../src/kafkajs';

// Pins, at the pinned kafkajs, every internal shape the adapter (src/kafkajs) relies on. No broker:
// clients are created but never connected. A kafkajs upgrade that breaks one fails here by name.

const KAFKAJS_SRC = join(require.resolve('kafkajs/package.json'), '..', 'src');
const kafkajsSource = (file: string) => readFileSync(join(KAFKAJS_SRC, file), 'utf8');
/** kafkajs's own error for a broker error code, built as its response parsers build it. */
const brokerError = (code: number): Error & { type: string } =>
  (
    require('kafkajs/src/protocol/error') as { createErrorFromCode(c: number): Error & { type: string } }
  ).createErrorFromCode(code);

const newKafka = () => new Kafka({ clientId: 'internals-test', brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING });

describe('the kafkajs version check', () => {
  it('accepts the installed kafkajs, which is the supported release', () => {
    expect(installedKafkajsVersion()).toBe(SUPPORTED_KAFKAJS_VERSION);
    expect(() => assertSupportedKafkajs()).not.toThrow();
  });

  it('refuses another release, naming the installed and the supported version', () => {
    const refused = (() => {
      try {
        assertSupportedKafkajs('2.3.0');
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(UnsupportedKafkajsError);
    expect(refused).toMatchObject({ code: 'KAFKAJS_UNSUPPORTED', installed: '2.3.0', supported: '2.2.4' });
    expect((refused as Error).message).toMatch(/kafkajs 2\.3\.0 is installed.*supports kafkajs 2\.2\.4/);
  });
});

describe("kafkajs's cluster factory", () => {
  it('sits on every client under its private symbol, and makes Clusters with the methods the adapter calls', () => {
    const kafka = newKafka();
    const key = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER_SYMBOL);
    const factory = (kafka as unknown as Record<symbol, unknown>)[key!];
    expect(typeof factory).toBe('function');
    const cluster = (factory as (o: object) => Record<string, unknown>)({ allowAutoTopicCreation: false });
    for (const method of [...TOPIC_FETCHER_CLUSTER_METHODS, 'findGroupCoordinator']) {
      expect([method, typeof cluster[method]]).toEqual([method, 'function']);
    }
  });

  it("is what a producer's cluster comes from: the coordinator lookup is wrapped, and the factory put back", () => {
    const kafka = newKafka();
    const key = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER_SYMBOL)!;
    const before = (kafka as unknown as Record<symbol, unknown>)[key];
    const wrapped: unknown[] = [];
    const producer = withCoordinatorLookup(
      kafka,
      (find) => {
        wrapped.push(find);
        return find;
      },
      () => kafka.producer({ transactionalId: 'tx', idempotent: true, maxInFlightRequests: 1 }),
    );
    expect(typeof producer.transaction).toBe('function');
    expect(wrapped).toHaveLength(1);
    expect(typeof wrapped[0]).toBe('function');
    expect((kafka as unknown as Record<symbol, unknown>)[key]).toBe(before);
  });

  it("hands back a producer's Cluster.addMultipleTargetTopics (metadata up front), with the coordinator lookup also wrapped, and puts the factory back", async () => {
    const kafka = newKafka();
    const key = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER_SYMBOL)!;
    const before = (kafka as unknown as Record<symbol, unknown>)[key];
    const wrapped: unknown[] = [];
    const { client, addTargetTopics } = withTargetTopics(kafka, () =>
      withCoordinatorLookup(
        kafka,
        (find) => {
          wrapped.push(find);
          return find;
        },
        () => kafka.producer({ transactionalId: 'tx', idempotent: true, maxInFlightRequests: 1 }),
      ),
    );
    expect(typeof client.transaction).toBe('function');
    expect(wrapped).toHaveLength(1);
    expect(typeof addTargetTopics).toBe('function');
    expect((kafka as unknown as Record<symbol, unknown>)[key]).toBe(before);
    // What the producer's send path calls for each batch: kafkajs src/producer/sendMessages.js.
    expect(kafkajsSource('producer/sendMessages.js')).toMatch(/cluster\.addMultipleTargetTopics\(/);
    expect(() => withTargetTopics({} as Kafka, () => 'client')).toThrow(KafkajsShapeError);
  });

  it('a client without it fails by name; the coordinator cache then creates the client unchanged', () => {
    const plain = {} as Kafka;
    expect(() =>
      withCoordinatorLookup(
        plain,
        (find) => find,
        () => 'client',
      ),
    ).toThrow(KafkajsShapeError);
    expect(withCoordinatorCache(plain, 1_000, () => 'client')).toBe('client');
  });

  it('a Cluster without a method the fetcher calls fails by name before connecting; PartitionReader falls back', async () => {
    const kafka = newKafka();
    const key = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER_SYMBOL)!;
    (kafka as unknown as Record<symbol, unknown>)[key] = () => ({ connect: async () => undefined });
    await expect(openTopicFetcher(kafka, 't')).rejects.toMatchObject({
      name: 'KafkajsShapeError',
      what: 'Cluster.disconnect',
    });
    await expect(PartitionReader.open(kafka, 't', { maxBytes: 1, maxBytesPerPartition: 1 })).resolves.toBeNull();
  });

  it("Broker.fetch takes the request the fetcher sends, and READ_COMMITTED is kafkajs's isolation level", () => {
    const fetch = kafkajsSource('broker/index.js');
    expect(fetch).toMatch(
      /async fetch\(\{\s*replicaId,\s*isolationLevel,\s*maxWaitTime[^}]*minBytes[^}]*maxBytes[^}]*topics/,
    );
    expect(require('kafkajs/src/protocol/isolationLevel')).toMatchObject({ READ_COMMITTED });
  });
});

describe("kafkajs's Batch, as the topic fetcher reads a partition", () => {
  const record = (offset: string, extra: object = {}) => ({
    offset,
    key: Buffer.from('k'),
    value: Buffer.from('v'),
    timestamp: '0',
    attributes: 0,
    headers: {},
    batchContext: { producerId: '7', inTransaction: true },
    ...extra,
  });
  const partition = (messages: object[], abortedTransactions: object[] = []) =>
    ({
      partition: 2,
      highWatermark: '20',
      lastStableOffset: '18',
      messages,
      abortedTransactions,
    }) as unknown as FetchPartitionData;

  it('keeps committed records at or after the fetch offset; the last offset counts markers and aborted records', () => {
    const read = batchReader();
    const batch = read(
      't',
      '5',
      partition(
        [
          record('4'), // before the fetch offset (a compacted batch that starts earlier)
          record('5', { batchContext: { producerId: '1', inTransaction: true } }),
          record('6'), // producer 7's aborted transaction
          record('7', { key: Buffer.from([0, 0, 0, 0]), isControlRecord: true }), // its abort marker
        ],
        [{ producerId: '7', firstOffset: '6' }],
      ),
    );
    expect(batch.messages.map((m) => m.offset)).toEqual(['5']);
    expect(batch).toMatchObject({
      partition: 2,
      lastOffset: '7',
      rawCount: 4,
      highWatermark: '20',
      lastStableOffset: '18',
    });
  });

  it('has no last offset when every record is before the fetch offset, and counts them', () => {
    const batch = batchReader()('t', '5', partition([record('3'), record('4')]));
    expect(batch).toMatchObject({ messages: [], lastOffset: undefined, rawCount: 2 });
  });
});

describe("kafkajs's client factories, as the benchmark intercepts them", () => {
  it.each(['producer', 'consumer'] as const)(
    'Kafka.prototype.%s goes through the interceptor until undone',
    (method) => {
      const original = Kafka.prototype[method];
      const seen: unknown[] = [];
      const undo = interceptClientCreation(method, (config, create) => {
        seen.push(config);
        return create(config as never) as never;
      });
      try {
        const kafka = newKafka();
        const client = method === 'producer' ? kafka.producer({ idempotent: true }) : kafka.consumer({ groupId: 'g' });
        expect(typeof (client as Producer).disconnect).toBe('function');
        expect(seen).toEqual([method === 'producer' ? { idempotent: true } : { groupId: 'g' }]);
      } finally {
        undo();
      }
      expect(Kafka.prototype[method]).toBe(original);
    },
  );
});

describe("kafkajs's error shapes", () => {
  it('a pause, resume or seek on a consumer not yet run throws the error the ports recognise', () => {
    const consumer = newKafka().consumer({ groupId: 'g' });
    const thrown = [
      () => consumer.pause([{ topic: 't' }]),
      () => consumer.resume([{ topic: 't' }]),
      () => consumer.seek({ topic: 't', partition: 0, offset: '0' }),
    ].map((call) => {
      try {
        call();
      } catch (err) {
        return err;
      }
    });
    expect(thrown.map(isConsumerNotRunningError)).toEqual([true, true, true]);
    expect(kafkajsSource('consumer/index.js')).toContain(CONSUMER_NOT_RUNNING_MESSAGE);
    expect(isConsumerNotRunningError(new KafkaJSNonRetriableError('Offset must not be a negative number'))).toBe(false);
  });

  it('a broker error carries its Kafka name as `type`, for each name the runtime decides by', () => {
    const names = [
      'CONCURRENT_TRANSACTIONS',
      'INVALID_PRODUCER_EPOCH',
      'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
      ...RECORD_REJECTED_TYPES,
    ];
    const { errorCodes } = require('kafkajs/src/protocol/error') as {
      errorCodes: Array<{ type: string; code: number }>;
    };
    for (const name of names) {
      const code = errorCodes.find((e) => e.type === name)?.code;
      expect([name, code === undefined ? undefined : kafkaErrorType(brokerError(code))]).toEqual([name, name]);
    }
  });

  it("the fencing text is kafkajs's INVALID_PRODUCER_EPOCH message, recognised also once its type is lost", () => {
    const epoch = brokerError(47);
    expect(hasProducerFencedMessage(epoch)).toBe(true);
    const untyped = new KafkaJSNonRetriableError(epoch.message);
    expect(kafkaErrorType(untyped)).toBeUndefined();
    expect(isFencedError(untyped)).toBe(true);
    expect(isFencedError(new KafkaJSNonRetriableError('Consumer group was not initialized'))).toBe(false);
  });

  it('a retry that gave up links the last error as its cause, which the cause walk follows', () => {
    const tooLarge = brokerError(10);
    const gaveUp = new KafkaJSNumberOfRetriesExceeded(tooLarge, { retryCount: 5, retryTime: 100 });
    expect([...causes(gaveUp, 6)]).toEqual([gaveUp, tooLarge]);
    expect(recordRejection(gaveUp)).toBe('MESSAGE_TOO_LARGE');
    expect([...causes(gaveUp, 1)]).toEqual([gaveUp]);
  });

  it('an offset out of range in a fetch names its partition, as the fetch response parser builds it', () => {
    expect(kafkajsSource('protocol/requests/fetch/v0/response.js')).toContain(
      'new KafkaJSOffsetOutOfRange(createErrorFromCode(errorCode), { topic, partition })',
    );
    const err = new KafkaJSOffsetOutOfRange(brokerError(1) as never, { topic: 't', partition: 3 });
    expect(offsetOutOfRangePartition(err)).toBe(3);
    expect(offsetOutOfRangePartition(brokerError(10))).toBeUndefined();
  });
});
