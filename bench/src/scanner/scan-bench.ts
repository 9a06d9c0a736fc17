import { encodeStoredEntity } from '@state-relay/contracts';
// Benchmark of unlimited-rate scans: a replica of N rows (default 1,000,000, 10% matching the
// dormancy sweep) walked and its commands emitted to a real broker, several runs. Not a test: it
// prints figures and writes them to docs/benchmarks/scanner.{json,md}. Needs the container
// runtime for the broker, which the root script starts:
//   pnpm bench:scanner --rows 1000000
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { ReplicaStore, type ChangelogRecord } from '@state-relay/store';
import { createTopics, kafkaClient, LatencyHistogram, startKafka } from '@state-relay/testkit';
import pino from 'pino';
import { buildApp, createScannerMetrics } from '@state-relay/scanner';
import {
  CommandLagProbe,
  CommandSender,
  COMMANDS_PER_BATCH,
  COMMANDS_PER_REQUEST,
  EngineScanService,
  openScansDatabase,
  ScanEngine,
} from '@state-relay/scanner/internal';
import { table } from './markdown';
import { diskSection, measureScansDisk, type DiskResult } from './scans-disk';

const DAY = 86_400_000;
const AS_OF = Date.UTC(2026, 10, 1);
const FILL_BATCH = 50_000;
const PARTITIONS = 6;
const TOPIC = 'bench-commands';
const TOKEN = 'bench-token-0123456789abcdef';

interface Args {
  /** `disk`: only the scans.sqlite disk-use figure (no broker). */
  part?: 'disk';
  rows: number;
  runs: number;
  chunkSize: number;
  out: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    rows: 1_000_000,
    runs: 3,
    chunkSize: 2_000,
    out: resolve(__dirname, '../../../docs/benchmarks'),
  };
  const rest = argv.filter((a) => a !== '--');
  const positive = (v: string | undefined) =>
    Number.isSafeInteger(Number(v)) && Number(v) > 0 ? Number(v) : undefined;
  for (let i = 0; i < rest.length; i += 2) {
    const [flag, value] = [rest[i], rest[i + 1]];
    if (flag === '--rows' && positive(value)) args.rows = positive(value)!;
    else if (flag === '--runs' && positive(value)) args.runs = positive(value)!;
    else if (flag === '--chunk-size' && positive(value)) args.chunkSize = positive(value)!;
    else if (flag === '--out' && value) args.out = resolve(value);
    else if (flag === '--part' && value === 'disk') args.part = value;
    else
      throw new Error(
        `usage: scan-bench [--part disk] [--rows N] [--runs N] [--chunk-size N] [--out DIR]; got ${flag} ${value ?? ''}`,
      );
  }
  return args;
}

/** An account like the demo domain's; every 10th is active and idle for 40 days (matches the sweep). */
function account(i: number) {
  const idle = i % 10 === 0;
  return {
    version: 1 + (i % 7),
    value: {
      status: i % 10 === 5 ? 'dormant' : 'active',
      balance: (i * 37) % 10_000,
      createdAt: AS_OF - 400 * DAY,
      lastActiveAt: AS_OF - (idle ? 40 : i % 20) * DAY,
      counters: { events: 3 + (i % 13), activities: i % 11, payments: i % 5 },
    },
    seen: '',
  };
}

function seed(replica: ReplicaStore, rows: number): number {
  let matching = 0;
  for (let from = 0; from < rows; from += FILL_BATCH) {
    const batch: ChangelogRecord[] = [];
    for (let i = from; i < Math.min(rows, from + FILL_BATCH); i++) {
      if (i % 10 === 0) matching++;
      const key = `acct-${String(i).padStart(8, '0')}`;
      batch.push({
        partition: i % PARTITIONS,
        offset: String(Math.floor(i / PARTITIONS)),
        key,
        value: encodeStoredEntity(account(i)),
      });
    }
    replica.apply(batch);
  }
  replica.checkpointWal('TRUNCATE');
  return matching;
}

const ms = (ns: number) => Number((ns / 1e6).toFixed(1));
const round1 = (x: number) => Number(x.toFixed(1));

interface Probe {
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  apiLatencyMs: { requests: number; p50: number; p99: number; max: number };
}

/** Polls `path` every 100 ms until `done` says so, measuring event-loop delay and API latency. */
async function probe(url: string, path: string, done: (body: unknown, elapsedMs: number) => boolean): Promise<Probe> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  const latencies = new LatencyHistogram();
  const started = performance.now();
  delay.enable();
  for (;;) {
    const t = performance.now();
    const body: unknown = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) =>
      r.json(),
    );
    latencies.record(performance.now() - t);
    if (done(body, performance.now() - started)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  delay.disable();
  return {
    eventLoopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
    apiLatencyMs: {
      requests: latencies.count,
      p50: round1(latencies.percentile(50)),
      p99: round1(latencies.percentile(99)),
      max: round1(latencies.max),
    },
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.part === 'disk') return writeDisk(args.out, await measureScansDisk(5));
  const dir = mkdtempSync(join(tmpdir(), 'scanner-bench-'));
  const broker = await startKafka();
  const logger = pino({ level: 'warn' });
  const kafka = kafkaClient(broker.brokers, 'scanner-bench');
  const admin = kafka.admin();
  const replica = ReplicaStore.open({ path: join(dir, 'replica.sqlite') });
  const database = openScansDatabase(join(dir, 'scans.sqlite'));
  const store = database.scans;
  const sender = new CommandSender(kafka, TOPIC, logger);
  try {
    await admin.connect();
    await createTopics(admin, [{ topic: TOPIC, partitions: PARTITIONS }]);
    const matching = seed(replica, args.rows);
    console.log(`replica: ${args.rows} rows, ${matching} matching, ${(replica.sizeBytes() / 1e6).toFixed(0)} MB`);

    const metrics = createScannerMetrics();
    const engine = new ScanEngine({
      store,
      replica,
      // No processor here: the replica is complete, and the back-off never triggers.
      replicaProgress: { currentEnds: async () => new Map(), waitFor: async () => undefined },
      sink: sender,
      commandLag: new CommandLagProbe({ admin, groupId: 'no-processor', topic: TOPIC }),
      metrics,
      logger,
      chunkSize: args.chunkSize,
      maxCommandLag: Number.MAX_SAFE_INTEGER,
      replicaCatchUpTimeoutMs: 1_000,
      knownDomainActions: ['mark_dormant'],
      // The scanner's own walk and emit throughput: no processor to protect, so no ramp and no budget.
      pacing: {
        signal: { latest: () => undefined, baseline: () => null },
        defaultBudget: { off: true },
        tuning: { startRate: 1_000_000 },
      },
    });
    // The HTTP API runs alongside and is polled during each scan, to show it stays responsive.
    const service = new EngineScanService(engine, store, { lag: () => [] });
    const deps = { scans: service, replica: { ready: true, lag: () => [] }, metrics, logger };
    const app = buildApp({ ...deps, apiToken: TOKEN, maxBodyBytes: 65_536 });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    engine.start();

    // The same probes for 3 s with no scan: what this (possibly shared) machine gives an idle process.
    const idle = await probe(url, '/scans', (_body, elapsed) => elapsed >= 3_000);
    let peakRss = process.memoryUsage.rss();
    const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50);
    const runs: Run[] = [];
    for (let run = 1; run <= args.runs; run++) {
      const started = performance.now();
      const scan = engine.create({ ...DORMANCY_SWEEP, asOf: AS_OF });
      const during = await probe(
        url,
        `/scans/${scan.id}`,
        (body) => (body as { phase?: string }).phase === 'awaiting_results',
      );
      const seconds = (performance.now() - started) / 1000;
      const done = store.get(scan.id)!;
      if (done.scanned !== args.rows || done.emitted !== matching) {
        throw new Error(`run ${run} did not walk every row and emit every command: ${JSON.stringify(done)}`);
      }
      await engine.cancel(scan.id); // no processor answers: free the queue for the next run
      runs.push({
        scannerSeconds: round1(seconds),
        rowsWalkedPerSecond: Math.round(done.scanned / seconds),
        commandsEmittedPerSecond: Math.round(done.emitted / seconds),
        ...during,
      });
      console.log(`run ${run}: ${JSON.stringify(runs.at(-1))}`);
    }
    clearInterval(rssTimer);
    const onTopic = (await admin.fetchTopicOffsets(TOPIC)).reduce((sum, p) => sum + Number(p.high), 0);
    if (onTopic !== matching * args.runs)
      throw new Error(`expected ${matching * args.runs} commands on the topic, found ${onTopic}`);
    await engine.stop();
    await app.close();

    const result = summarize(args, matching, runs, idle, peakRss, onTopic);
    console.log(JSON.stringify(result, null, 2));
    write(args.out, result);
  } finally {
    await sender.disconnect();
    await admin.disconnect().catch(() => undefined);
    database.close();
    replica.close();
    rmSync(dir, { recursive: true, force: true });
    await broker.stop();
  }
}

interface Run extends Probe {
  scannerSeconds: number;
  rowsWalkedPerSecond: number;
  commandsEmittedPerSecond: number;
}

function summarize(args: Args, matching: number, runs: Run[], idle: Probe, peakRss: number, onTopic: number) {
  return {
    date: new Date().toISOString(),
    machine: {
      nproc: Number(execFileSync('nproc').toString().trim()),
      cpu: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      // The machine may be shared: the load says how much else was running.
      loadAverage1m: round1(loadavg()[0]!),
    },
    rows: args.rows,
    matching,
    chunkSize: args.chunkSize,
    commandsPerBatch: COMMANDS_PER_BATCH,
    commandsPerRequest: COMMANDS_PER_REQUEST,
    partitions: PARTITIONS,
    commandsOnTopic: onTopic,
    median: [...runs].sort((a, b) => a.scannerSeconds - b.scannerSeconds)[Math.floor(runs.length / 2)]!,
    runs,
    idleBaseline: idle,
    peakRssMb: Math.round(Math.max(peakRss, process.resourceUsage().maxRSS * 1024) / 1e6),
  };
}

function write(dir: string, r: ReturnType<typeof summarize>): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'scanner.json'), `${JSON.stringify(r, null, 2)}\n`);
  const n = (x: number) => x.toLocaleString('en-US');
  const m = r.median;
  const triple = (x: { p50: number; p99: number; max: number }) => `${x.p50} / ${x.p99} / ${x.max} ms`;
  const md = `# Scanner benchmark

Unlimited-rate scans over a replica of ${n(r.rows)} rows, ${n(r.matching)} (10%) matching the dormancy
sweep, each match emitted as one command to a ${r.partitions}-partition topic on a single-node broker
(Testcontainers). No processor runs: this is the scanner's own time, from the scan's creation to the
end of emission (phase \`awaiting_results\`). ${r.runs.length} runs on the same replica; the table shows the
median run. The HTTP API was polled every 100 ms during each scan. Event-loop delay is sampled at a
10 ms resolution (about 10 ms is the floor); the idle baseline is the same probes for 3 s, no scan.

Machine: ${r.machine.nproc} CPUs (\`nproc\`, ${r.machine.cpu}), Node ${r.machine.node}, ${r.date.slice(0, 10)}. The machine is
shared with other work (1-minute load average ${r.machine.loadAverage1m} at the end of the run), so the
latencies include time the scanner waited for a CPU. Chunks of ${n(r.chunkSize)} keys; batches of up to
${n(r.commandsPerBatch)} commands, sent in producer requests of up to ${n(r.commandsPerRequest)}.

${table([
  ['measure', 'value'],
  ['rows walked per run', n(r.rows)],
  ['commands emitted per run', n(r.matching)],
  [
    'scanner time (median; all runs)',
    `${m.scannerSeconds} s (${r.runs.map((x) => `${x.scannerSeconds} s`).join(', ')})`,
  ],
  ['rows walked / s', n(m.rowsWalkedPerSecond)],
  ['commands emitted / s', n(m.commandsEmittedPerSecond)],
  ['event-loop delay p50 / p99 / max', triple(m.eventLoopDelayMs)],
  [`GET /scans/:id latency p50 / p99 / max (${m.apiLatencyMs.requests} requests)`, triple(m.apiLatencyMs)],
  ['idle baseline: event-loop delay p50 / p99 / max', triple(r.idleBaseline.eventLoopDelayMs)],
  ['idle baseline: API latency p50 / p99 / max', triple(r.idleBaseline.apiLatencyMs)],
  ['peak RSS (whole process, replica seeding included)', `${r.peakRssMb} MB`],
])}

Reproduce: \`pnpm bench:scanner --rows ${r.rows} --runs ${r.runs.length}\`
${diskSection(dir)}`;
  writeFileSync(join(dir, 'scanner.md'), md);
  console.log(`wrote ${join(dir, 'scanner.json')} and scanner.md`);
}

/** Writes scanner-disk.json and replaces scanner.md's disk section (or appends it), keeping the rest. */
function writeDisk(dir: string, r: DiskResult): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'scanner-disk.json'), `${JSON.stringify(r, null, 2)}\n`);
  const md = join(dir, 'scanner.md');
  const before = existsSync(md) ? readFileSync(md, 'utf8') : '# Scanner benchmark\n';
  const cut = before.indexOf('\n## scans.sqlite disk use');
  writeFileSync(md, `${cut === -1 ? before : before.slice(0, cut)}${diskSection(dir)}`);
  console.log(`wrote ${join(dir, 'scanner-disk.json')} and the disk section of scanner.md`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
