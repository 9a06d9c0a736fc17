import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { accountsDomain } from '@state-relay/accounts';
import { ReplaceableAdmin } from '@state-relay/kafka-runtime';
import { checkKafkaConnection, createKafkaClient, type KafkaClientOptions } from '@state-relay/service-kit';
import { ReplicaStore, SqliteFile, type Schema } from '@state-relay/store';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { CommandLagProbe } from './scans/command-lag';
import { CommandSender } from './scans/command-sender';
import type { ScannerConfig } from './config';
import type { ScannerMetrics } from './metrics';
import { ReplicaFollower } from './replica/replica-follower';
import { ResultsFollower } from './replica/results-follower';
import { ScanEngine } from './scans/scan-engine';
import { EngineScanService, type ReplicaHealth } from './scans/scan-service';
import { COMMAND_TABLES } from './scans/command-store';
import { ScanRowsRetention } from './scans/scan-retention';
import { SCAN_TABLES, ScanStore } from './scans/scan-store';
import { StoreScheduleService } from './schedules/schedule-service';
import { SCHEDULE_TABLES, ScheduleStore } from './schedules/schedule-store';
import { Scheduler } from './schedules/scheduler';
import { IDEMPOTENCY_TABLES, IdempotencyKeys } from './http/idempotency';
import { waitForTopics } from './replica/topics';
import { EventLatencySignal } from './processors/event-latency';
import { ProcessorSampler } from './processors/processor-sampler';

/**
 * scans.sqlite: one file and one connection for the scanner's stores, so a schedule's run and its scan
 * commit together. Version 1: scans and commands; 2: schedules; 3: idempotency keys. Every table is
 * created IF NOT EXISTS, so the whole DDL brings a file of any older version up to this one.
 */
export const SCANS_FILE_SCHEMA: Schema = {
  version: 3,
  ddl: SCAN_TABLES + COMMAND_TABLES + SCHEDULE_TABLES + IDEMPOTENCY_TABLES,
};

/** The stores of scans.sqlite, opened together; close() closes the file. */
export interface ScansDatabase {
  readonly file: SqliteFile;
  readonly scans: ScanStore;
  readonly schedules: ScheduleStore;
  close(): void;
}

/** Opens (creating its directory and tables if needed) the scanner's scans.sqlite. */
export function openScansDatabase(path: string): ScansDatabase {
  mkdirSync(dirname(path), { recursive: true });
  const file = SqliteFile.open(path, SCANS_FILE_SCHEMA);
  try {
    return { file, scans: new ScanStore(file), schedules: new ScheduleStore(file), close: () => file.close() };
  } catch (err) {
    file.close();
    throw err;
  }
}

export interface ScannerDeps {
  config: ScannerConfig;
  logger: Logger;
  metrics: ScannerMetrics;
  /** Names a command's `{domain}` action may use; the accounts domain's by default. */
  knownDomainActions?: string[];
}

/**
 * The scanner's parts wired together: the replica and its follower, the scans database and the
 * results follower, the command producer and the engine. The databases open at construction, so
 * the API can queue scans while Kafka is still coming up; start() connects the rest.
 */
export class Scanner {
  readonly kafka: Kafka;
  /** What `kafka` was made from: the start check makes its own client from them, without retries. */
  private readonly kafkaOptions: KafkaClientOptions;
  readonly replica: ReplicaStore;
  readonly database: ScansDatabase;
  readonly store: ScanStore;
  readonly engine: ScanEngine;
  readonly service: EngineScanService;
  readonly replicaHealth: ReplicaHealth;
  /** The processor's lag on the commands topic: the walk backs off on it, GET /status shows it. */
  readonly commandLag: CommandLagProbe;
  readonly schedules: StoreScheduleService;
  /** Idempotency-Key of POST /scans and POST /schedules, kept in scans.sqlite. */
  readonly idempotency: IdempotencyKeys;
  /** Started by the process once the engine runs (server.ts), stopped first on stop(). */
  readonly scheduler: Scheduler;
  /**
   * Each processor's GET /status (PROCESSOR_URLS), read once a second from start(): the status page
   * shows it and the walk is paced by its event latency.
   */
  readonly processors: ProcessorSampler;
  private processorPoll?: NodeJS.Timeout;
  private readonly admin: ReplaceableAdmin;
  private readonly follower: ReplicaFollower;
  private readonly results: ResultsFollower;
  private readonly sender: CommandSender;
  private readonly retention: ScanRowsRetention;
  private readonly stopping = new AbortController();
  private started = false;
  private stopped = false;

  constructor(private readonly deps: ScannerDeps) {
    const { config, logger, metrics } = deps;
    this.kafkaOptions = {
      clientId: `${config.appId}-scanner-${config.scannerId}`,
      brokers: config.brokers,
      connection: config.kafkaConnection,
      logger,
    };
    this.kafka = createKafkaClient(this.kafkaOptions);
    this.admin = new ReplaceableAdmin(this.kafka, {
      onReplaced: (call, err) => {
        metrics.adminReplacements.inc();
        logger.warn(
          { call, err },
          'admin call failed; the admin client is replaced, the next call opens new connections',
        );
      },
    });
    this.replica = ReplicaStore.open({ path: config.replicaPath });
    this.database = openScansDatabase(config.scansPath);
    this.store = this.database.scans;
    this.follower = new ReplicaFollower({
      kafka: this.kafka,
      admin: this.admin,
      topic: config.changelogTopic,
      // SQLite holds the replica's position and the group never commits, so a fresh group per
      // process: a restart never waits for a killed member's session to expire, and two scanners
      // can never split the partitions between them (each replica needs them all).
      groupId: `${config.appId}-scanner-replica-${config.scannerId}-${randomBytes(4).toString('hex')}`,
      replica: this.replica,
      logger: logger.child({ component: 'replica' }),
      metrics,
    });
    this.sender = new CommandSender(this.kafka, config.commandsTopic, logger, {
      onReplaced: (reason) => metrics.producerReplacements.inc({ reason }),
    });
    this.commandLag = new CommandLagProbe({ admin: this.admin, groupId: config.appId, topic: config.commandsTopic });
    this.processors = new ProcessorSampler({ urls: config.processors.urls, token: config.processors.token });
    this.engine = new ScanEngine({
      store: this.store,
      replica: this.replica,
      replicaProgress: this.follower,
      sink: this.sender,
      commandLag: this.commandLag,
      metrics,
      logger,
      chunkSize: config.chunkSize,
      maxCommandLag: config.maxCommandLag,
      replicaCatchUpTimeoutMs: config.replicaCatchUpTimeoutMs,
      knownDomainActions: deps.knownDomainActions ?? Object.keys(accountsDomain.domainActions),
      maxActiveScans: config.maxActiveScans,
      maxDurationMs: config.scanMaxDurationMs,
      pacing: { signal: new EventLatencySignal(this.processors), defaultBudget: config.latencyBudget },
    });
    this.results = new ResultsFollower({
      kafka: this.kafka,
      topic: config.resultsTopic,
      groupId: `${config.appId}-scanner-results-${config.scannerId}`,
      store: this.store,
      logger: logger.child({ component: 'results' }),
      metrics,
      onResults: () => this.engine.notifyResults(),
    });
    const follower = this.follower;
    this.replicaHealth = {
      get ready() {
        return follower.caughtUpOnce;
      },
      lag: () => follower.lag(),
    };
    this.service = new EngineScanService(this.engine, this.store, this.replicaHealth);
    const scheduleStore = this.database.schedules;
    this.schedules = new StoreScheduleService({
      store: scheduleStore,
      scans: this.service,
      knownDomainActions: deps.knownDomainActions ?? Object.keys(accountsDomain.domainActions),
      minIntervalMs: config.scheduleMinIntervalMs,
      maxSchedules: config.maxSchedules,
    });
    this.scheduler = new Scheduler({ store: scheduleStore, scans: this.service, logger });
    this.idempotency = new IdempotencyKeys(this.database.file, config.idempotencyKeyTtlMs);
    this.retention = new ScanRowsRetention(this.store, logger.child({ component: 'retention' }), {
      maxAgeMs: config.scanRows.maxAgeMs,
      maxScans: config.scanRows.maxScans,
      intervalMs: config.scanRows.pruneIntervalMs,
    });
    metrics.bind({
      pace: () => this.engine.currentPace(),
      scansByStatus: () => this.store.countByStatus(),
      replicaLag: () => follower.lag(),
      walBytes: () => (this.stopped ? 0 : this.replica.walSizeBytes()),
    });
  }

  /** Waits for the processor's topics, then follows the changelog and the results and runs scans. */
  async start(): Promise<void> {
    const { config, logger } = this.deps;
    this.started = true;
    this.retention.start(); // scans.sqlite only: it needs no broker
    this.startProcessorPoll();
    await checkKafkaConnection(this.kafkaOptions); // refused credentials or certificate: stop now
    await this.admin.connect();
    await waitForTopics(
      this.admin,
      [config.changelogTopic, config.commandsTopic, config.resultsTopic],
      logger,
      this.stopping.signal,
    );
    await this.follower.start();
    await this.results.start();
    this.engine.start();
    logger.info(
      { changelog: config.changelogTopic, commands: config.commandsTopic, results: config.resultsTopic },
      'scanner started',
    );
  }

  /** Reads the processors once a second from now on, so a scan's baseline has readings before it starts. */
  private startProcessorPoll(): void {
    const { config, logger } = this.deps;
    if (config.processors.urls.length === 0) {
      if (config.latencyBudget.off !== true)
        logger.warn(
          'PROCESSOR_URLS is unset: scans have no event latency to pace by, so their latency budget does not ' +
            'apply (each walk still ramps up to its rate, and pauses on command lag)',
        );
      return;
    }
    this.processorPoll = setInterval(() => void this.processors.tick(), 1_000); // tick never throws
    this.processorPoll.unref();
  }

  /** Stops the running scan at a chunk boundary (it resumes on restart), then Kafka, then SQLite. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopping.abort();
    clearInterval(this.processorPoll);
    this.scheduler.stop();
    await this.engine.stop();
    await Promise.all([this.follower.stop(), this.results.stop(), this.sender.disconnect(), this.retention.stop()]);
    if (this.started) await this.admin.disconnect().catch(() => undefined);
    this.database.close();
    this.replica.close();
  }
}
