import { runChild, type ChildMessage } from '../ipc';
import { encodeEvent, kafkajs, type Message } from '../lib';
import { steadyEvent, type SteadyLoadSpec } from '../steady-load';

export interface LoadChildConfig {
  brokers: string[];
  topic: string;
  /** Events per second while measuring. */
  rate: number;
  spec: SteadyLoadSpec;
}

const TICK_MS = 5;
const MAX_IN_FLIGHT = 5;
const FINISH_CHUNK = 2_000;

/**
 * The steady event load: events of the deterministic sequence at a fixed rate, each stamped
 * with the time it is handed to the producer (the latency's starting point). It runs in its
 * own process so it keeps its schedule while the processor stalls. On `finish` it sends the
 * rest of the sequence up to a total at full speed, so every deployment gets the same input.
 */
runChild<LoadChildConfig>(async (cfg, send) => {
  const kafka = new kafkajs.Kafka({ clientId: 'bench-load', brokers: cfg.brokers, logLevel: kafkajs.logLevel.NOTHING });
  // Retried for about a minute (kafkajs's default gives up after ~9 s): a broker killed in part 5
  // can leave a partition below min.insync.replicas longer than that, and an upstream producer that
  // dropped events there would leave the processor nothing to prove.
  const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 30, maxRetryTime: 2_000 } });
  await producer.connect();

  let sent = 0;
  let acked = 0;
  let inFlight = 0;
  /** Worst lag behind the schedule (events) since the last progress report. */
  let behind = 0;
  let finishAt: number | undefined;
  let stopping = false;
  const started = Date.now();
  send({ type: 'started', at: started });

  const batch = (n: number): Message[] => {
    const now = String(Date.now());
    const out: Message[] = [];
    for (let i = 0; i < n; i++) {
      const { key, event } = steadyEvent(cfg.spec, sent + i);
      out.push({ key, value: encodeEvent(event), timestamp: now });
    }
    return out;
  };

  const tick = () => {
    if (stopping) return;
    const due = finishAt ?? Math.floor(((Date.now() - started) * cfg.rate) / 1000);
    if (finishAt === undefined) behind = Math.max(behind, due - sent - cfg.rate / 100);
    while (inFlight < MAX_IN_FLIGHT && due > sent) {
      const n = Math.min(due - sent, finishAt === undefined ? Math.max(1, Math.ceil(cfg.rate / 20)) : FINISH_CHUNK);
      const messages = batch(n);
      sent += n;
      inFlight++;
      producer
        .send({ topic: cfg.topic, messages })
        .then(() => {
          inFlight--;
          acked += n;
          if (finishAt !== undefined && acked === finishAt) send({ type: 'finished', count: acked });
        })
        .catch((err: unknown) => {
          send({ type: 'error', message: `producing the load failed: ${String(err)}` });
          process.exit(1);
        });
    }
    setTimeout(tick, TICK_MS);
  };
  tick();
  const progress = setInterval(() => {
    send({ type: 'progress', at: Date.now(), sent, acked, behindMs: (behind / cfg.rate) * 1000 });
    behind = 0;
  }, 1_000);

  process.on('message', (m: ChildMessage) => {
    if (m.type === 'finish') {
      finishAt = Math.max(Number(m.total), sent);
      send({ type: 'measured', at: Date.now(), count: sent, behindMs: (behind / cfg.rate) * 1000 });
      if (acked === finishAt && inFlight === 0) send({ type: 'finished', count: acked });
    } else if (m.type === 'stop') {
      stopping = true;
      clearInterval(progress);
      const wait = setInterval(() => {
        if (inFlight > 0) return;
        clearInterval(wait);
        void producer.disconnect().then(() => {
          send({ type: 'stopped', count: sent });
          setTimeout(() => process.exit(0), 50);
        });
      }, 10);
    }
  });
});
