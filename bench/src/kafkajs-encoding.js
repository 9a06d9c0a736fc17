// Micro-benchmark of kafkajs's produce path as patched (patches/kafkajs@2.2.4.patch), issue 32:
// the processor's records through the producer's send path (grouping per partition, Produce v7
// request encoding) with a fake cluster, no broker. Plain node, no build:
//
//   node bench/src/kafkajs-encoding.js [kafkajs dir...]   (ROUNDS=9 by default)
//
// The kafkajs dir defaults to the installed (patched) one; give another copy (e.g. the edit
// directory of `pnpm patch kafkajs@2.2.4` before a change) to compare. Each round sends 100,000
// records: 50,000 commands, each a changelog record (entity key, ~160-byte value, on its task's
// partition, the unit's one input-positions headers object shared by the task's records) and a
// result (command key, ~250-byte value, no headers, placed by the default partitioner), 500
// commands per transaction over 4 tasks, as the processor's commitUnits builds them. Prints the
// µs per record (CPU of the process, and wall) of the whole send path and of the record encoder
// alone on either kind of record, medians of the rounds; the copies' rounds alternate.
'use strict';

const path = require('node:path');

const installed = path.dirname(require.resolve('kafkajs/package.json'));
const roots = (process.argv.length > 2 ? process.argv.slice(2) : [installed]).map((d) => path.resolve(d));
const ROUNDS = Number(process.env.ROUNDS || 9);

const COMMANDS = 50_000;
const PER_SEND = 500;
const TASKS = 4;
const RESULT_PARTITIONS = 8;
const CHANGELOG = 'state-relay.changelog';
const RESULTS = 'state-relay.results';
const RECORDS = COMMANDS * 2;

const partitionMetadata = (n) =>
  Array.from({ length: n }, (_, partition) => ({ partitionId: partition, leader: 1 + (partition % 3) }));
const metadata = { [CHANGELOG]: partitionMetadata(TASKS), [RESULTS]: partitionMetadata(RESULT_PARTITIONS) };
const silent = { debug() {}, info() {}, warn() {}, error() {} };
silent.namespace = () => silent;

/** The send path and the record encoder of the kafkajs copy at `root`. */
function load(root) {
  const kjs = (p) => require(path.join(root, 'src', p));
  const createSendMessages = kjs('producer/sendMessages');
  const createRetry = kjs('retry');
  const { DefaultPartitioner } = kjs('producer/partitioners');
  const produceV7 = kjs('protocol/requests/produce/v7/request');
  const Record = kjs('protocol/recordBatch/record/v0');

  const state = { bytes: 0 };
  const broker = (nodeId) => ({
    nodeId,
    async produce(request) {
      const encoded = await produceV7(request).encode();
      state.bytes += encoded.size();
      return {
        topics: request.topicData.map(({ topic, partitions }) => ({
          topicName: topic,
          partitions: partitions.map(({ partition }) => ({ partition, errorCode: 0, baseOffset: '0' })),
        })),
      };
    },
  });
  const brokers = new Map([1, 2, 3].map((n) => [n, broker(n)]));
  const cluster = {
    async refreshMetadataIfNecessary() {},
    async addMultipleTargetTopics() {},
    findTopicPartitionMetadata: (topic) => metadata[topic],
    findLeaderForPartitions(topic, partitions) {
      const perLeader = {};
      for (const partition of partitions) {
        const { leader } = metadata[topic][partition];
        (perLeader[leader] = perLeader[leader] || []).push(partition);
      }
      return perLeader;
    },
    findBroker: async ({ nodeId }) => brokers.get(Number(nodeId)),
  };
  const sequences = new Map();
  const seq = (topic, partition) => sequences.get(`${topic}-${partition}`) || 0;
  const eosManager = {
    isTransactional: () => true,
    getTransactionalId: () => 'processor-0',
    getProducerId: () => 7,
    getProducerEpoch: () => 0,
    getSequence: seq,
    updateSequence: (topic, partition, n) => sequences.set(`${topic}-${partition}`, seq(topic, partition) + n),
    releaseSequence: () => false,
    async addPartitionsToTransaction() {},
    async acquireBrokerLock() {},
    async releaseBrokerLock() {},
  };
  const sendMessages = createSendMessages({
    logger: silent,
    cluster,
    partitioner: DefaultPartitioner(),
    eosManager,
    retrier: createRetry({ retries: 0 }),
  });

  return {
    root,
    state,
    async sendPath(transactions) {
      for (const topicMessages of transactions) await sendMessages({ acks: -1, timeout: 30000, topicMessages });
    },
    /** The record encoder alone, on the transactions' messages of one topic (0 changelog, 1 results). */
    recordEncoder(transactions, topicIndex) {
      for (const topicMessages of transactions) {
        const { messages } = topicMessages[topicIndex];
        for (let i = 0; i < messages.length; i++) Record({ ...messages[i], offsetDelta: i, timestampDelta: 0 });
      }
    },
  };
}

/** One transaction's topic messages, as commitUnits builds them (changelog first, then results). */
function transactionOf(first) {
  const changelog = [];
  const results = [];
  // One headers object per task's unit, new for every transaction, shared by its changelog records.
  const headers = Array.from({ length: TASKS }, (_, task) => ({
    'sr.input-positions': `state-relay.commands=${1_000_000 + first + task},state-relay.events=${5_000_000 + first}`,
  }));
  for (let i = first; i < first + PER_SEND; i++) {
    const task = i % TASKS;
    const key = `account-${String(i % 200_000).padStart(8, '0')}`;
    changelog.push({ key, value: Buffer.alloc(160, i & 0xff), partition: task, headers: headers[task] });
    results.push({ key: Buffer.from(`cmd-${key}`), value: Buffer.alloc(250, (i + 1) & 0xff) });
  }
  return [
    { topic: CHANGELOG, messages: changelog },
    { topic: RESULTS, messages: results },
  ];
}

/** Fresh messages (and headers objects) for every measurement. */
function transactions() {
  const all = [];
  for (let first = 0; first < COMMANDS; first += PER_SEND) all.push(transactionOf(first));
  return all;
}

/** µs per record (of `records`) of `fn`, of this process's CPU (user + system) and of the wall clock. */
async function measure(fn, records = RECORDS) {
  const input = transactions();
  const cpu = process.cpuUsage();
  const wall = process.hrtime.bigint();
  await fn(input);
  const used = process.cpuUsage(cpu);
  return {
    cpu: (used.user + used.system) / records,
    wall: Number(process.hrtime.bigint() - wall) / 1e3 / records,
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

(async () => {
  const copies = roots.map(load);
  const runs = {
    'send path (group + Produce v7 encode), all records': (c) => measure((t) => c.sendPath(t)),
    'record encoder, changelog records (shared headers)': (c) => measure((t) => c.recordEncoder(t, 0), COMMANDS),
    'record encoder, result records (no headers)': (c) => measure((t) => c.recordEncoder(t, 1), COMMANDS),
  };
  for (const c of copies) for (const run of Object.values(runs)) await run(c); // warm-up
  const results = copies.map(() => Object.fromEntries(Object.keys(runs).map((name) => [name, []])));
  // Rounds alternate between the copies, so that a change in the machine's load hits them alike.
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, c] of copies.entries()) {
      c.state.bytes = 0;
      for (const [name, run] of Object.entries(runs)) results[i][name].push(await run(c));
    }
  }
  const f = (xs) =>
    `${median(xs.map((x) => x.cpu)).toFixed(2)} µs/record CPU (${median(xs.map((x) => x.wall)).toFixed(2)} wall)`;
  console.log(`${RECORDS} records per round (${COMMANDS} commands), ${ROUNDS} rounds, medians`);
  for (const [i, c] of copies.entries()) {
    console.log(`kafkajs at ${c.root} (${c.state.bytes} request bytes per round)`);
    for (const name of Object.keys(runs)) console.log(`  ${name}: ${f(results[i][name])}`);
  }
})();
