import { changelogTopicName } from '@state-relay/contracts';

/** Everything the processor reads from its environment, validated once at start. */
export interface ProcessorConfig {
  brokers: string[];
  appId: string;
  storeName: string;
  eventsTopic: string;
  commandsTopic: string;
  resultsTopic: string;
  deadLetterTopic: string;
  changelogTopic: string;
  /** Partition count used when the processor creates missing topics. */
  partitions: number;
  stateDir: string;
  httpHost: string;
  httpPort: number;
  logLevel: string;
  transactionTimeoutMs: number;
  sessionTimeoutMs: number;
  /** Partitions processed concurrently by this instance (each task stays serial). */
  concurrency: number;
  /** How often each task commits its open unit of work (one transaction per task per interval). */
  commitIntervalMs: number;
  /** A task commits early once its open unit holds this many input records. */
  commitMaxRecords: number;
  /** A task pauses its partitions while its uncommitted input records exceed this (back-pressure). */
  maxUncommittedRecords: number;
  /**
   * Bytes fetched per partition per fetch. kafkajs fetches again only when every batch of a
   * fetch is folded, so this bounds how long a burst on one input (a sweep's commands) holds
   * back the events of every task.
   */
  fetchMaxBytesPerPartition: number;
}

/**
 * Who may read entities over HTTP (`GET /state/:key`): holders of a bearer token (the default),
 * or anyone, when an operator turns it off explicitly with `STATE_API_AUTH=off`.
 */
export type StateReadAuth = { kind: 'bearer'; token: string } | { kind: 'off' };

/** The process's configuration: the processor's, plus the access rule of its HTTP API. */
export interface ServerConfig extends ProcessorConfig {
  stateAuth: StateReadAuth;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID' as const;
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const TOPIC = /^[A-Za-z0-9._-]{1,249}$/;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const MIN_TOKEN_LENGTH = 16;

/** Reads and checks every variable, reporting all bad values at once, each with its name. */
export function loadConfig(env: NodeJS.ProcessEnv): ProcessorConfig {
  const problems: string[] = [];
  const config = readProcessorConfig(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * loadConfig plus `STATE_API_TOKEN` / `STATE_API_AUTH`, for the process that serves HTTP. Kept
 * apart so embedders without an HTTP surface (the benchmark's processor) need no token.
 */
export function loadServerConfig(env: NodeJS.ProcessEnv): ServerConfig {
  const problems: string[] = [];
  const config = readProcessorConfig(env, problems);
  const stateAuth = readStateAuth(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...config, stateAuth };
}

/** Never quotes the token: problems are printed at start. */
function readStateAuth(env: NodeJS.ProcessEnv, problems: string[]): StateReadAuth {
  const mode = env.STATE_API_AUTH?.trim() || 'token';
  const token = env.STATE_API_TOKEN?.trim() ?? '';
  if (mode === 'off') {
    if (token !== '') problems.push('STATE_API_TOKEN is set but STATE_API_AUTH=off: unset one of them');
    return { kind: 'off' };
  }
  if (mode !== 'token') {
    problems.push(`STATE_API_AUTH must be "token" (the default) or "off", got "${mode}"`);
    return { kind: 'off' };
  }
  if (token === '') {
    problems.push(
      'STATE_API_TOKEN is required: the bearer token GET /state/:key asks for (STATE_API_AUTH=off serves state without one)',
    );
  } else if (token.length < MIN_TOKEN_LENGTH) {
    problems.push(`STATE_API_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters, got ${token.length}`);
  }
  return { kind: 'bearer', token };
}

function readProcessorConfig(env: NodeJS.ProcessEnv, problems: string[]): ProcessorConfig {
  const str = (name: string, fallback?: string): string => {
    const v = env[name]?.trim();
    if (v) return v;
    if (fallback === undefined) problems.push(`${name} is required`);
    return fallback ?? '';
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return n;
  };
  const topic = (name: string, fallback: string): string => {
    const t = str(name, fallback);
    if (!TOPIC.test(t))
      problems.push(`${name} must be a Kafka topic name ([A-Za-z0-9._-], at most 249 chars), got "${t}"`);
    return t;
  };

  const brokers = str('KAFKA_BROKERS')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  for (const b of brokers)
    if (!/^[^:\s]+:\d{1,5}$/.test(b)) problems.push(`KAFKA_BROKERS entries must be host:port, got "${b}"`);
  const appId = str('APP_ID', 'state-relay');
  if (!TOPIC.test(appId)) problems.push(`APP_ID must use only [A-Za-z0-9._-], got "${appId}"`);
  const storeName = str('STORE_NAME', 'accounts');
  if (!TOPIC.test(storeName)) problems.push(`STORE_NAME must use only [A-Za-z0-9._-], got "${storeName}"`);
  const logLevel = str('LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);

  const config: ProcessorConfig = {
    brokers,
    appId,
    storeName,
    eventsTopic: topic('EVENTS_TOPIC', 'accounts-events'),
    commandsTopic: topic('COMMANDS_TOPIC', 'accounts-commands'),
    resultsTopic: topic('RESULTS_TOPIC', 'accounts-command-results'),
    deadLetterTopic: topic('DEAD_LETTER_TOPIC', 'accounts-dead-letter'),
    changelogTopic: changelogTopicName(appId, storeName),
    partitions: int('PARTITIONS', 6, 1, 1000),
    stateDir: str('STATE_DIR', './data/processor'),
    httpHost: str('HTTP_HOST', '0.0.0.0'),
    httpPort: int('HTTP_PORT', 8080, 0, 65535),
    logLevel,
    transactionTimeoutMs: int('TRANSACTION_TIMEOUT_MS', 60_000, 1_000, 900_000),
    sessionTimeoutMs: int('SESSION_TIMEOUT_MS', 30_000, 6_000, 300_000),
    concurrency: int('CONCURRENCY', 4, 1, 64),
    commitIntervalMs: int('COMMIT_INTERVAL_MS', 100, 1, 60_000),
    commitMaxRecords: int('COMMIT_MAX_RECORDS', 10_000, 1, 1_000_000),
    maxUncommittedRecords: int('MAX_UNCOMMITTED_RECORDS', 50_000, 1, 10_000_000),
    fetchMaxBytesPerPartition: int('FETCH_MAX_BYTES_PER_PARTITION', 262_144, 16_384, 16_777_216),
  };
  if (config.maxUncommittedRecords < config.commitMaxRecords) {
    problems.push(
      `MAX_UNCOMMITTED_RECORDS (${config.maxUncommittedRecords}) must be at least COMMIT_MAX_RECORDS (${config.commitMaxRecords})`,
    );
  }
  if (config.commitIntervalMs >= config.transactionTimeoutMs) {
    problems.push(
      `COMMIT_INTERVAL_MS (${config.commitIntervalMs}) must be lower than TRANSACTION_TIMEOUT_MS (${config.transactionTimeoutMs})`,
    );
  }
  if (config.eventsTopic === config.commandsTopic) problems.push('EVENTS_TOPIC and COMMANDS_TOPIC must differ');
  return config;
}
