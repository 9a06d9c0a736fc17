import { kafkajs } from '../lib';

/** One committed transaction of a task producer: when it ended and where its time went (ms). */
export interface TransactionTiming {
  endedAt: number;
  /** transaction() to commit() resolved. */
  total: number;
  /** sendBatch (all slices), sendOffsets, commit. */
  send: number;
  offsets: number;
  commit: number;
}

type ProducerConfig = Parameters<kafkajs.Kafka['producer']>[0];
type Transaction = Awaited<ReturnType<kafkajs.Producer['transaction']>>;

/**
 * Benchmark instrumentation of the processor's transactional producers, without touching the
 * processor: every producer created with a transactional id in this process reports each
 * committed transaction's timing. `retryFromMs` is the what-if of bench --tx-retry-ms: the
 * producers' retry starts there instead of kafka-runtime's 100 ms.
 */
export function instrumentTransactions(onCommitted: (t: TransactionTiming) => void, retryFromMs?: number): void {
  const original = kafkajs.Kafka.prototype.producer;
  kafkajs.Kafka.prototype.producer = function (this: kafkajs.Kafka, config?: ProducerConfig) {
    if (!config?.transactionalId) return original.call(this, config);
    const producer = original.call(
      this,
      retryFromMs === undefined ? config : { ...config, retry: { ...config.retry, initialRetryTime: retryFromMs } },
    );
    const begin = producer.transaction.bind(producer);
    producer.transaction = async () => {
      const started = performance.now();
      const tx = await begin();
      const t = { send: 0, offsets: 0, commit: 0 };
      const time = <K extends 'sendBatch' | 'sendOffsets' | 'commit'>(name: K, into: keyof typeof t) => {
        const call = tx[name].bind(tx) as (...args: unknown[]) => Promise<unknown>;
        (tx as Record<K, unknown>)[name] = async (...args: unknown[]) => {
          const s = performance.now();
          try {
            return await call(...args);
          } finally {
            t[into] += performance.now() - s;
          }
        };
      };
      time('sendBatch', 'send');
      time('sendOffsets', 'offsets');
      time('commit', 'commit');
      const commit = tx.commit;
      tx.commit = async () => {
        await commit();
        onCommitted({ endedAt: Date.now(), total: performance.now() - started, ...t });
      };
      return tx as Transaction;
    };
    return producer;
  };
}
