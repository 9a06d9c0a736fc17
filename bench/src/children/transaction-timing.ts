import { interceptClientCreation, type Producer } from '../lib';

/** One committed transaction of a task producer: when it ended and where its time went (ms). */
export interface TransactionTiming {
  /** The task, from the transactional id `<app>-<task>` (-1 if the id has another form, e.g. v2's instance producer). */
  task: number;
  /** Per-task number of this transaction among every transaction() begun for the task (fences included). */
  seq: number;
  endedAt: number;
  /** transaction() to commit() resolved. */
  total: number;
  /** sendBatch (all slices), sendOffsets, commit. */
  send: number;
  offsets: number;
  commit: number;
}

/** A transaction that ended in abort(): a fence (begin + abort, nothing sent) or a failed commit. */
export interface AbortedTransaction {
  task: number;
  endedAt: number;
  /** Nothing was sent in it: initTaskProducer's fence (InitProducerId) or an empty unit. */
  empty: boolean;
}

export interface TransactionObserver {
  onCommitted(t: TransactionTiming): void;
  onAborted?(t: AbortedTransaction): void;
  /** Every request a task producer sent (kafkajs's REQUEST instrumentation event): API name, round trip in ms. */
  onRequest?(api: string, ms: number): void;
}

export interface TransactionCounters {
  /** Transactions begun so far for `task` (synchronously counted when transaction() is called). */
  begun(task: number): number;
}

type Transaction = Awaited<ReturnType<Producer['transaction']>>;

/**
 * Benchmark instrumentation of the processor's transactional producers, without touching the
 * processor: every producer created with a transactional id in this process reports each
 * committed transaction's timing. A transaction that sent nothing is not a committed
 * transaction: initTaskProducer's fence begins and aborts an empty one (that is how kafkajs
 * can be made to send InitProducerId), and kafkajs sends no EndTxn for an empty commit; both
 * are reported as aborted/empty, never as committed. Every request the producers send is
 * reported too (FindCoordinator, AddPartitionsToTxn, Produce, AddOffsetsToTxn,
 * TxnOffsetCommit, EndTxn, retries included): what one transaction costs in round trips. `retryFromMs` is the what-if of
 * bench --tx-retry-ms: the producers' retry starts there instead of kafka-runtime's 20 ms.
 */
export function instrumentTransactions(observer: TransactionObserver, retryFromMs?: number): TransactionCounters {
  const begun = new Map<number, number>();
  interceptClientCreation('producer', (config, create) => {
    if (!config?.transactionalId) return create(config);
    // `<app>-<task>` (v1); the instance's `<app>-instance-<id>` (v2) carries every task: -1.
    const task = config.transactionalId.includes('-instance-')
      ? -1
      : Number(/-(\d+)$/.exec(config.transactionalId)?.[1] ?? -1);
    const producer = create(
      retryFromMs === undefined ? config : { ...config, retry: { ...config.retry, initialRetryTime: retryFromMs } },
    );
    if (observer.onRequest) {
      const onRequest = observer.onRequest;
      producer.on(producer.events.REQUEST, ({ payload }) => onRequest(payload.apiName, payload.duration));
    }
    const begin = producer.transaction.bind(producer);
    producer.transaction = async () => {
      // Counted before the first await: the processor calls transaction() synchronously when it
      // swaps its open unit out, so a caller can tell which transaction carries what it folded.
      const seq = (begun.get(task) ?? 0) + 1;
      begun.set(task, seq);
      const started = performance.now();
      const tx = await begin();
      const t = { send: 0, offsets: 0, commit: 0 };
      let sent = false;
      const time = <K extends 'send' | 'sendBatch' | 'sendOffsets' | 'commit'>(name: K, into: keyof typeof t) => {
        const call = tx[name].bind(tx) as (...args: unknown[]) => Promise<unknown>;
        (tx as Record<K, unknown>)[name] = async (...args: unknown[]) => {
          if (name !== 'commit') sent = true;
          const s = performance.now();
          try {
            return await call(...args);
          } finally {
            t[into] += performance.now() - s;
          }
        };
      };
      time('send', 'send');
      time('sendBatch', 'send');
      time('sendOffsets', 'offsets');
      time('commit', 'commit');
      const commit = tx.commit;
      tx.commit = async () => {
        await commit();
        if (sent) observer.onCommitted({ task, seq, endedAt: Date.now(), total: performance.now() - started, ...t });
        else observer.onAborted?.({ task, endedAt: Date.now(), empty: true });
      };
      const abort = tx.abort.bind(tx);
      tx.abort = async () => {
        try {
          return await abort();
        } finally {
          observer.onAborted?.({ task, endedAt: Date.now(), empty: !sent });
        }
      };
      return tx as Transaction;
    };
    return producer;
  });
  return { begun: (task) => begun.get(task) ?? 0 };
}

/**
 * The fetch loop of the consumer of group `groupId` in this process (the processor's own, not
 * its restore consumers): when each fetch started and how long it took. A long gap between two
 * fetch starts is the fetch loop standing still (a blocking afterBatch, a synchronous fold).
 */
export function instrumentFetches(groupId: string, onFetch: (startedAt: number, ms: number) => void): void {
  interceptClientCreation('consumer', (config, create) => {
    const consumer = create(config);
    if (config.groupId === groupId) {
      consumer.on(consumer.events.FETCH, ({ timestamp, payload }) =>
        onFetch(timestamp - payload.duration, payload.duration),
      );
    }
    return consumer;
  });
}
