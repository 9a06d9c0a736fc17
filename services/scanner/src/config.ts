import { join } from 'node:path';
import { changelogTopicName } from '@state-relay/contracts';

/** Everything the scanner reads from its environment, validated once at start. */
export interface ScannerConfig {
  brokers: string[];
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
export const MIN_TOKEN_LENGTH = 16;

/** Reads and checks every variable, reporting all bad values at once, each with its name. */
export function loadConfig(env: NodeJS.ProcessEnv): ScannerConfig {
  const problems: string[] = [];
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
  const name = (variable: string, fallback: string, what = 'must use only [A-Za-z0-9._-]'): string => {
    const t = str(variable, fallback);
    if (!TOPIC.test(t)) problems.push(`${variable} ${what}, got "${t}"`);
    return t;
  };
  const topic = (variable: string, fallback: string) =>
    name(variable, fallback, 'must be a Kafka topic name ([A-Za-z0-9._-], at most 249 chars)');

  const brokers = str('KAFKA_BROKERS')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  for (const b of brokers)
    if (!/^[^:\s]+:\d{1,5}$/.test(b)) problems.push(`KAFKA_BROKERS entries must be host:port, got "${b}"`);
  const appId = name('APP_ID', 'state-relay');
  const storeName = name('STORE_NAME', 'accounts');
  const logLevel = str('LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  // The token is checked by length only and never quoted back: a config error must not leak it.
  const apiToken = env.API_TOKEN?.trim() ?? '';
  if (!apiToken) problems.push('API_TOKEN is required');
  else if (apiToken.length < MIN_TOKEN_LENGTH) {
    problems.push(`API_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters (got ${apiToken.length})`);
  }
  const stateDir = str('STATE_DIR', './data/scanner');
  let changelogTopic = '';
  try {
    changelogTopic = changelogTopicName(appId, storeName);
  } catch (err) {
    if (TOPIC.test(appId) && TOPIC.test(storeName)) problems.push(`APP_ID and STORE_NAME: ${(err as Error).message}`);
  }

  const config: ScannerConfig = {
    brokers,
    appId,
    storeName,
    changelogTopic,
    commandsTopic: topic('COMMANDS_TOPIC', 'accounts-commands'),
    resultsTopic: topic('RESULTS_TOPIC', 'accounts-command-results'),
    stateDir,
    replicaPath: join(stateDir, 'replica.sqlite'),
    scansPath: join(stateDir, 'scans.sqlite'),
    httpHost: str('HTTP_HOST', '0.0.0.0'),
    httpPort: int('HTTP_PORT', 8081, 0, 65535),
    logLevel,
    apiToken,
    maxCommandLag: int('MAX_COMMAND_LAG', 10_000, 1, Number.MAX_SAFE_INTEGER),
    chunkSize: int('CHUNK_SIZE', 2_000, 1, 100_000),
    maxBodyBytes: int('MAX_BODY_BYTES', 65_536, 1_024, 16 * 1024 * 1024),
    scannerId: name('SCANNER_ID', 'scanner'),
    replicaCatchUpTimeoutMs: int('REPLICA_CATCHUP_TIMEOUT_MS', 120_000, 1_000, 24 * 3_600_000),
    scheduleMinIntervalMs: int('SCHEDULE_MIN_INTERVAL_MS', 60_000, 1_000, 86_400_000),
  };
  if (config.commandsTopic === config.resultsTopic) problems.push('COMMANDS_TOPIC and RESULTS_TOPIC must differ');
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
