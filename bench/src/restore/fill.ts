import { AS_OF } from '../common';
import { evaluateCondition, mulberry32, type Condition, type JsonObject, type Kafka, type Message } from '../lib';
import { encodeFreshEntity } from '../stored-entity';

const DAY = 24 * 60 * 60 * 1000;
/** Records per produce request, and requests in flight: keys are distinct, so order does not matter. */
const CHUNK = 12_000;
const IN_FLIGHT = 3;

export interface FillResult {
  records: number;
  /** Bytes of the record values (what the stores hold), and the mean per record. */
  valueBytes: number;
  meanValueBytes: number;
  ms: number;
  /** Records whose value `count` (a condition) matches at AS_OF. */
  matching: number;
}

/** `acct-` and the zero-padded index, as generateAccountEvents names its accounts. */
export function accountKey(i: number, keys: number): string {
  return `acct-${String(i).padStart(Math.max(6, String(Math.max(keys - 1, 0)).length), '0')}`;
}

/** An account as the accounts fold builds one (every field it sets), active, from a seeded stream. */
function accountValue(random: () => number): JsonObject {
  const events = 2 + Math.floor(random() * 40);
  const payments = Math.floor((events - 1) * random() * 0.3);
  const lastActiveAt = AS_OF - Math.floor(random() * 200 * DAY);
  return {
    status: 'active',
    balance: Math.floor(random() * 25_000) - 5_000, // minor units, as the generator's payments
    createdAt: lastActiveAt - Math.floor(random() * 365 * DAY),
    lastActiveAt,
    counters: { events, activities: events - 1 - payments, payments },
  };
}

/**
 * Writes `keys` entities (one record each, remembering no command) straight into a changelog
 * topic with a plain producer (acks=all, not transactional: read_committed consumers see
 * non-transactional records as soon as they are written, and there are no commit markers),
 * keyed with kafkajs's default partitioner, the one the processor's inputs use, so each key lands
 * in its task's partition. The inputs stay empty: a processor starting on it has nothing to do
 * but restore.
 */
export async function fillChangelog(
  kafka: Kafka,
  topic: string,
  keys: number,
  options: { seed: number; count?: Condition },
): Promise<FillResult> {
  const started = Date.now();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const random = mulberry32(options.seed);
  let valueBytes = 0;
  let matching = 0;
  let failure: unknown;
  const inFlight = new Set<Promise<void>>();
  try {
    for (let i = 0; i < keys && failure === undefined; i += CHUNK) {
      const messages: Message[] = [];
      for (let k = i; k < Math.min(keys, i + CHUNK); k++) {
        const value = accountValue(random);
        if (options.count && evaluateCondition(options.count, value, { asOf: AS_OF })) matching++;
        const encoded = encodeFreshEntity(1 + Math.floor(random() * 20), value);
        valueBytes += encoded.length;
        messages.push({ key: accountKey(k, keys), value: encoded });
      }
      const sent: Promise<void> = producer
        .send({ topic, messages, acks: -1 })
        .then(
          () => undefined,
          (err: unknown) => void (failure ??= err),
        )
        .finally(() => inFlight.delete(sent));
      inFlight.add(sent);
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    if (failure !== undefined) throw failure;
  } finally {
    await producer.disconnect();
  }
  return {
    records: keys,
    valueBytes,
    meanValueBytes: valueBytes / Math.max(1, keys),
    ms: Date.now() - started,
    matching,
  };
}
