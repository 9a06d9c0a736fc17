import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { changelogTopicName } from '@state-relay/contracts';
import {
  checkChangelogName,
  EnvVar,
  KAFKA_CONNECTION_ENV,
  kafkaConnectionFrom,
  type KafkaConnection,
  fromEnv,
  loadEnv,
  SHARED_CONFIG_FROM_ENV,
  MIN_TOKEN_LENGTH,
} from '@state-relay/service-kit';
import { parseLatencyBudget, type LatencyBudget } from './scans/latency-budget';

/** Everything the scanner reads from its environment, validated once at start. */
export interface ScannerConfig {
  brokers: string[];
  /** TLS and SASL (KAFKA_SECURITY_PROTOCOL and the rest); its JSON names no secret. */
  kafkaConnection: KafkaConnection;
  /** The processor's app id; its consumer group id is the same string. */
  appId: string;
  storeName: string;
  changelogTopic: string;
  commandsTopic: string;
  resultsTopic: string;
  stateDir: string;
  /** The replica (a copy of the changelog) and the scanner's own scans database. */
  replicaPath: string;
  scansPath: string;
  httpHost: string;
  httpPort: number;
  logLevel: string;
  /** Never logged, never echoed. */
  apiToken: string;
  /** Back off while the processor's lag on the commands topic is above this many records. */
  maxCommandLag: number;
  /** Replica keys walked per chunk (a scan's batchSize overrides it). */
  chunkSize: number;
  maxBodyBytes: number;
  scannerId: string;
  /** How long a scan waits for the replica to reach the changelog end before it fails. */
  replicaCatchUpTimeoutMs: number;
  /** The shortest schedule interval accepted; lower than a minute only in tests. */
  scheduleMinIntervalMs: number;
  /** Pending and running scans at most; a scan created over it gets 429. */
  maxActiveScans: number;
  /** How long a scan without options.maxDuration may run before it ends failed. */
  scanMaxDurationMs: number;
  /** Schedules at most; a schedule created over it gets 409. */
  maxSchedules: number;
  /** How long an Idempotency-Key of POST /scans or POST /schedules is remembered. */
  idempotencyKeyTtlMs: number;
  /** Retention of finished scans' per-command rows (commands and results); their counts stay. */
  scanRows: { maxAgeMs: number; maxScans: number; pruneIntervalMs: number };
  /** The processor instances the status page shows (GET <url>/status, read once a second), and their token. */
  processors: { urls: string[]; token: string };
  /** The event p99 a scan without options.latencyBudget may reach (SCAN_LATENCY_BUDGET). */
  latencyBudget: LatencyBudget;
}

/** The scanner's environment: README.md's configuration table is checked against it. */
export const SCANNER_ENV = Type.Object({
  KAFKA_BROKERS: EnvVar.brokers(),
  ...KAFKA_CONNECTION_ENV,
  APP_ID: EnvVar.kafkaName('state-relay', "the processor's app id; its consumer group id is the same string"),
  STORE_NAME: EnvVar.kafkaName('accounts', 'the changelog is <APP_ID>-<STORE_NAME>-changelog'),
  COMMANDS_TOPIC: EnvVar.topic('accounts-commands'),
  RESULTS_TOPIC: EnvVar.topic('accounts-command-results'),
  STATE_DIR: EnvVar.text({ default: './data/scanner' }),
  HTTP_HOST: EnvVar.text({ default: '0.0.0.0' }),
  HTTP_PORT: EnvVar.port(8081),
  LOG_LEVEL: EnvVar.logLevel(),
  API_TOKEN: EnvVar.token({
    description: 'bearer token for the scan routes',
    problem: `must be at least ${MIN_TOKEN_LENGTH} characters (got {length})`,
  }),
  API_TOKEN_FILE: Type.Optional(EnvVar.fileOf('API_TOKEN')),
  MAX_COMMAND_LAG: EnvVar.integer({ default: 10_000, minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  SCAN_LATENCY_BUDGET: EnvVar.text({
    default: '1.2x',
    description: 'the event commit p99 a scan may reach: a ratio of the baseline (1.2x), milliseconds (300ms) or off',
  }),
  CHUNK_SIZE: EnvVar.integer({ default: 2_000, minimum: 1, maximum: 100_000 }),
  MAX_BODY_BYTES: EnvVar.integer({ default: 65_536, minimum: 1_024, maximum: 16 * 1024 * 1024 }),
  SCANNER_ID: EnvVar.kafkaName('scanner', "names this scanner's consumer groups"),
  REPLICA_CATCHUP_TIMEOUT_MS: EnvVar.integer({ default: 120_000, minimum: 1_000, maximum: 24 * 3_600_000 }),
  SCHEDULE_MIN_INTERVAL_MS: EnvVar.integer({ default: 60_000, minimum: 1_000, maximum: 86_400_000 }),
  MAX_ACTIVE_SCANS: EnvVar.integer({ default: 100, minimum: 1, maximum: 100_000 }),
  SCAN_MAX_DURATION_MS: EnvVar.integer({ default: 86_400_000, minimum: 1_000, maximum: 366 * 86_400_000 }),
  MAX_SCHEDULES: EnvVar.integer({ default: 100, minimum: 1, maximum: 100_000 }),
  IDEMPOTENCY_KEY_TTL_MS: EnvVar.integer({ default: 86_400_000, minimum: 60_000, maximum: 30 * 86_400_000 }),
  SCAN_ROWS_MAX_AGE_MS: EnvVar.integer({ default: 7 * 86_400_000, minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  SCAN_ROWS_MAX_SCANS: EnvVar.integer({ default: 20, minimum: 0, maximum: 1_000_000 }),
  SCAN_ROWS_PRUNE_INTERVAL_MS: EnvVar.integer({ default: 600_000, minimum: 1_000, maximum: 86_400_000 }),
  PROCESSOR_URLS: Type.Optional(
    EnvVar.text({ description: 'base URLs of the processor instances the status page shows, comma-separated' }),
  ),
  PROCESSOR_API_TOKEN: Type.Optional(
    EnvVar.token({ description: "bearer token of the processors' GET /status (their STATE_API_TOKEN)" }),
  ),
  PROCESSOR_API_TOKEN_FILE: Type.Optional(EnvVar.fileOf('PROCESSOR_API_TOKEN')),
});

type ScannerEnv = Static<typeof SCANNER_ENV>;

/** Each field of ScannerConfig read from its variable (the changelog and the two database paths are derived). */
const CONFIG_FROM_ENV = {
  ...SHARED_CONFIG_FROM_ENV,
  apiToken: 'API_TOKEN',
  maxCommandLag: 'MAX_COMMAND_LAG',
  chunkSize: 'CHUNK_SIZE',
  maxBodyBytes: 'MAX_BODY_BYTES',
  scannerId: 'SCANNER_ID',
  replicaCatchUpTimeoutMs: 'REPLICA_CATCHUP_TIMEOUT_MS',
  scheduleMinIntervalMs: 'SCHEDULE_MIN_INTERVAL_MS',
  maxActiveScans: 'MAX_ACTIVE_SCANS',
  scanMaxDurationMs: 'SCAN_MAX_DURATION_MS',
  maxSchedules: 'MAX_SCHEDULES',
  idempotencyKeyTtlMs: 'IDEMPOTENCY_KEY_TTL_MS',
  scanRows: {
    maxAgeMs: 'SCAN_ROWS_MAX_AGE_MS',
    maxScans: 'SCAN_ROWS_MAX_SCANS',
    pruneIntervalMs: 'SCAN_ROWS_PRUNE_INTERVAL_MS',
  },
} as const satisfies Record<
  Exclude<
    keyof ScannerConfig,
    'changelogTopic' | 'replicaPath' | 'scansPath' | 'kafkaConnection' | 'processors' | 'latencyBudget'
  >,
  unknown
>;

/** Reads and checks every variable, reporting all bad values at once, each with its name. */
export function loadConfig(env: NodeJS.ProcessEnv): ScannerConfig {
  let kafkaConnection: KafkaConnection | undefined;
  const v = loadEnv(SCANNER_ENV, env, (values, problems) => {
    checkScanner(values, problems);
    kafkaConnection = kafkaConnectionFrom(values, problems);
  });
  return {
    ...fromEnv(v, CONFIG_FROM_ENV),
    kafkaConnection: kafkaConnection!,
    changelogTopic: changelogTopicName(v.APP_ID, v.STORE_NAME),
    replicaPath: join(v.STATE_DIR, 'replica.sqlite'),
    scansPath: join(v.STATE_DIR, 'scans.sqlite'),
    processors: { urls: processorUrls(v.PROCESSOR_URLS), token: v.PROCESSOR_API_TOKEN ?? v.API_TOKEN },
    latencyBudget: latencyBudgetOf(v.SCAN_LATENCY_BUDGET),
  };
}

const MAX_PROCESSORS = 32;
const processorUrls = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);

/** Checked in checkScanner: a bad value never gets this far. */
function latencyBudgetOf(text: string): LatencyBudget {
  const parsed = parseLatencyBudget(text);
  if ('problem' in parsed) throw new Error(`SCAN_LATENCY_BUDGET ${parsed.problem}`);
  return parsed.budget;
}

function checkScanner(v: Partial<ScannerEnv>, problems: string[]): void {
  checkChangelogName(v, problems);
  if (v.SCAN_LATENCY_BUDGET !== undefined) {
    const parsed = parseLatencyBudget(v.SCAN_LATENCY_BUDGET);
    if ('problem' in parsed) problems.push(`SCAN_LATENCY_BUDGET ${parsed.problem}`);
  }
  if (v.COMMANDS_TOPIC === v.RESULTS_TOPIC) problems.push('COMMANDS_TOPIC and RESULTS_TOPIC must differ');
  const urls = processorUrls(v.PROCESSOR_URLS);
  if (urls.length > MAX_PROCESSORS) problems.push(`PROCESSOR_URLS may name at most ${MAX_PROCESSORS} processors`);
  for (const url of urls) {
    const problem = baseUrlProblem(url);
    if (problem) problems.push(`PROCESSOR_URLS entries ${problem}`);
  }
}

function baseUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `must be http:// or https:// URLs, got "${url}"`;
  }
  // Never quoted: it could be a password.
  if (u.username || u.password) return 'must not hold credentials (the token is PROCESSOR_API_TOKEN)';
  if (!['http:', 'https:'].includes(u.protocol) || u.search || u.hash)
    return `must be http:// or https:// base URLs without query or fragment, got "${url}"`;
  return undefined;
}
