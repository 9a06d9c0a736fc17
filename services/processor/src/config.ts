import { Type, type Static } from '@sinclair/typebox';
import { changelogTopicName, type RelayTopics } from '@state-relay/contracts';
import {
  checkChangelogName,
  EnvVar,
  fromEnv,
  KAFKA_CONNECTION_ENV,
  kafkaConnectionFrom,
  loadEnv,
  PROBLEM_KEYWORD,
  SHARED_CONFIG_FROM_ENV,
  type KafkaConnection,
} from '@state-relay/service-kit';
import { DEFAULT_ENTITY_MAX_BYTES, TOPIC_MAX_MESSAGE_BYTES } from './kafka/limits';

/** Everything the processor reads from its environment, validated once at start. */
export interface ProcessorConfig extends RelayTopics {
  brokers: string[];
  /** TLS and SASL (KAFKA_SECURITY_PROTOCOL and the rest); its JSON names no secret. */
  kafkaConnection: KafkaConnection;
  appId: string;
  storeName: string;
  /** Partition count used when the processor creates missing topics. */
  partitions: number;
  stateDir: string;
  /** STATE_CLEANUP_DELAY_MS: a store of a task owned elsewhere is kept this long, then deleted. */
  stateCleanupDelayMs: number;
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
  /**
   * The share of a unit of work a task's commands may take: ceil(share x COMMIT_MAX_RECORDS)
   * records and share x COMMIT_INTERVAL_MS of fold time; above it the commands partition pauses
   * until the unit commits. 1: no cap.
   */
  commandShare: number;
  /** Fold time (ms) after which a fold slice yields to the event loop (besides 500 records). */
  foldSliceMs: number;
  /** 'false': the processor creates no topic and checks the ones that exist (a principal without Create). */
  topicsCreate: 'true' | 'false';
  /** Replication factor of the topics it creates; -1: the broker's default.replication.factor. */
  topicReplicationFactor: number;
  /** min.insync.replicas of the topics it creates; -1: the broker's default (not set on the topic). */
  topicMinInsyncReplicas: number;
  /** v1: one transactional producer and transaction per task; v2: one per instance (KIP-447). */
  exactlyOnce: 'v1' | 'v2';
  /**
   * v2: 'true' fences each task's legacy v1 transactional id `<APP_ID>-<task>` on every entry
   * (a group rolling from v1 to v2); 'false' skips it (a deployment that never ran v1).
   */
  exactlyOnceLegacyFence: 'true' | 'false';
  /** v2: names the instance's transactional id; unset: kept in STATE_DIR/instance-id. */
  instanceId?: string;
  /** Bytes an encoded entity may take: a change past it is refused (an `invalid` result, or an ENTITY_TOO_LARGE dead letter). */
  entityMaxBytes: number;
  /** Failures at the same restart position, with no commit between, after which the task isolates the record that causes them. */
  poisonMaxAttempts: number;
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

/** The processor's environment: README.md's configuration table is checked against it. */
export const PROCESSOR_ENV = Type.Object({
  KAFKA_BROKERS: EnvVar.brokers(),
  ...KAFKA_CONNECTION_ENV,
  APP_ID: EnvVar.kafkaName('state-relay', 'consumer group id, transactional id prefix, changelog prefix'),
  STORE_NAME: EnvVar.kafkaName('accounts', 'changelog = <APP_ID>-<STORE_NAME>-changelog'),
  EVENTS_TOPIC: EnvVar.topic('accounts-events'),
  COMMANDS_TOPIC: EnvVar.topic('accounts-commands'),
  RESULTS_TOPIC: EnvVar.topic('accounts-command-results'),
  DEAD_LETTER_TOPIC: EnvVar.topic('accounts-dead-letter'),
  PARTITIONS: EnvVar.integer({ default: 6, minimum: 1, maximum: 1000 }),
  STATE_DIR: EnvVar.text({ default: './data/processor' }),
  STATE_CLEANUP_DELAY_MS: EnvVar.integer({ default: 600_000, minimum: 0, maximum: 604_800_000 }),
  HTTP_HOST: EnvVar.text({ default: '0.0.0.0' }),
  HTTP_PORT: EnvVar.port(8080),
  LOG_LEVEL: EnvVar.logLevel(),
  TRANSACTION_TIMEOUT_MS: EnvVar.integer({ default: 60_000, minimum: 1_000, maximum: 900_000 }),
  SESSION_TIMEOUT_MS: EnvVar.integer({ default: 30_000, minimum: 6_000, maximum: 300_000 }),
  CONCURRENCY: EnvVar.integer({ default: 4, minimum: 1, maximum: 64 }),
  COMMIT_INTERVAL_MS: EnvVar.integer({ default: 100, minimum: 1, maximum: 60_000 }),
  COMMIT_MAX_RECORDS: EnvVar.integer({ default: 10_000, minimum: 1, maximum: 1_000_000 }),
  MAX_UNCOMMITTED_RECORDS: EnvVar.integer({ default: 50_000, minimum: 1, maximum: 10_000_000 }),
  FETCH_MAX_BYTES_PER_PARTITION: EnvVar.integer({ default: 262_144, minimum: 16_384, maximum: 16_777_216 }),
  // A fraction: service-kit's EnvVar has no decimal builder, and this is its only one.
  COMMAND_SHARE: Type.Number({
    default: 0.5,
    exclusiveMinimum: 0,
    maximum: 1,
    [PROBLEM_KEYWORD]: 'must be a number above 0 and at most 1, got "{value}"',
  }),
  FOLD_SLICE_MS: EnvVar.integer({ default: 4, minimum: 1, maximum: 1_000 }),
  ENTITY_MAX_BYTES: EnvVar.integer({
    default: DEFAULT_ENTITY_MAX_BYTES,
    minimum: 1_024,
    maximum: TOPIC_MAX_MESSAGE_BYTES,
  }),
  POISON_MAX_ATTEMPTS: EnvVar.integer({ default: 3, minimum: 1, maximum: 100 }),
  TOPICS_CREATE: EnvVar.oneOf(['true', 'false'], {
    default: 'true',
    problem: 'must be "true" (create missing topics) or "false" (create nothing; check the topics that exist)',
  }),
  TOPIC_REPLICATION_FACTOR: EnvVar.integer({ default: -1, minimum: -1, maximum: 32_767 }),
  TOPIC_MIN_INSYNC_REPLICAS: EnvVar.integer({ default: -1, minimum: -1, maximum: 32_767 }),
  EXACTLY_ONCE: EnvVar.oneOf(['v1', 'v2'], {
    default: 'v2',
    problem:
      'must be "v1" (one transaction per task) or "v2" (one per instance, fenced by the group generation; Kafka 2.5+)',
  }),
  EXACTLY_ONCE_LEGACY_FENCE: EnvVar.oneOf(['true', 'false'], {
    default: 'true',
    problem:
      'must be "true" (EXACTLY_ONCE=v2 fences each task\'s v1 transactional id <APP_ID>-<task> on entry) or "false" (skip it: no instance of this APP_ID ever ran v1)',
  }),
  INSTANCE_ID: Type.Optional(
    EnvVar.text({
      description:
        'EXACTLY_ONCE=v2: the instance transactional id is <APP_ID>-instance-<INSTANCE_ID>; unset: an id kept in STATE_DIR',
    }),
  ),
});

/** The process that serves HTTP also reads who may read state. */
export const SERVER_ENV = Type.Object({
  ...PROCESSOR_ENV.properties,
  STATE_API_TOKEN: Type.Optional(EnvVar.token({ description: 'the bearer token GET /state/:key asks for' })),
  STATE_API_TOKEN_FILE: Type.Optional(EnvVar.fileOf('STATE_API_TOKEN')),
  STATE_API_AUTH: EnvVar.oneOf(['token', 'off'], {
    default: 'token',
    problem: 'must be "token" (the default) or "off"',
  }),
});

/** Reads and checks every variable, reporting all bad values at once, each with its name. */
export function loadConfig(env: NodeJS.ProcessEnv): ProcessorConfig {
  let connection: KafkaConnection | undefined;
  const values = loadEnv(PROCESSOR_ENV, env, (v, problems) => {
    checkProcessor(v, problems);
    connection = kafkaConnectionFrom(v, problems);
  });
  return toProcessorConfig(values, connection!);
}

/**
 * loadConfig plus `STATE_API_TOKEN` / `STATE_API_AUTH`, for the process that serves HTTP. Kept
 * apart so embedders without an HTTP surface (the benchmark's processor) need no token.
 */
export function loadServerConfig(env: NodeJS.ProcessEnv): ServerConfig {
  let connection: KafkaConnection | undefined;
  const values = loadEnv(SERVER_ENV, env, (v, problems) => {
    checkProcessor(v, problems);
    checkStateAuth(v, problems);
    connection = kafkaConnectionFrom(v, problems);
  });
  const stateAuth: StateReadAuth =
    values.STATE_API_AUTH === 'off' ? { kind: 'off' } : { kind: 'bearer', token: values.STATE_API_TOKEN ?? '' };
  return { ...toProcessorConfig(values, connection!), stateAuth };
}

type ProcessorEnv = Static<typeof PROCESSOR_ENV>;

/** Each field of ProcessorConfig read from its variable (the changelog's name is derived). */
const CONFIG_FROM_ENV = {
  ...SHARED_CONFIG_FROM_ENV,
  eventsTopic: 'EVENTS_TOPIC',
  deadLetterTopic: 'DEAD_LETTER_TOPIC',
  partitions: 'PARTITIONS',
  stateCleanupDelayMs: 'STATE_CLEANUP_DELAY_MS',
  transactionTimeoutMs: 'TRANSACTION_TIMEOUT_MS',
  sessionTimeoutMs: 'SESSION_TIMEOUT_MS',
  concurrency: 'CONCURRENCY',
  commitIntervalMs: 'COMMIT_INTERVAL_MS',
  commitMaxRecords: 'COMMIT_MAX_RECORDS',
  maxUncommittedRecords: 'MAX_UNCOMMITTED_RECORDS',
  fetchMaxBytesPerPartition: 'FETCH_MAX_BYTES_PER_PARTITION',
  commandShare: 'COMMAND_SHARE',
  foldSliceMs: 'FOLD_SLICE_MS',
  entityMaxBytes: 'ENTITY_MAX_BYTES',
  poisonMaxAttempts: 'POISON_MAX_ATTEMPTS',
  exactlyOnce: 'EXACTLY_ONCE',
  exactlyOnceLegacyFence: 'EXACTLY_ONCE_LEGACY_FENCE',
  topicsCreate: 'TOPICS_CREATE',
  topicReplicationFactor: 'TOPIC_REPLICATION_FACTOR',
  topicMinInsyncReplicas: 'TOPIC_MIN_INSYNC_REPLICAS',
  instanceId: 'INSTANCE_ID',
} as const satisfies Record<Exclude<keyof ProcessorConfig, 'changelogTopic' | 'kafkaConnection'>, keyof ProcessorEnv>;

function toProcessorConfig(v: ProcessorEnv, kafkaConnection: KafkaConnection): ProcessorConfig {
  return {
    ...fromEnv(v, CONFIG_FROM_ENV),
    changelogTopic: changelogTopicName(v.APP_ID, v.STORE_NAME),
    kafkaConnection,
  };
}

function checkProcessor(v: Partial<ProcessorEnv>, problems: string[]): void {
  const { MAX_UNCOMMITTED_RECORDS: maxUncommitted, COMMIT_MAX_RECORDS: commitMax } = v;
  if (maxUncommitted !== undefined && commitMax !== undefined && maxUncommitted < commitMax) {
    problems.push(`MAX_UNCOMMITTED_RECORDS (${maxUncommitted}) must be at least COMMIT_MAX_RECORDS (${commitMax})`);
  }
  const { COMMIT_INTERVAL_MS: interval, TRANSACTION_TIMEOUT_MS: timeout } = v;
  if (interval !== undefined && timeout !== undefined && interval >= timeout) {
    problems.push(`COMMIT_INTERVAL_MS (${interval}) must be lower than TRANSACTION_TIMEOUT_MS (${timeout})`);
  }
  if (v.EVENTS_TOPIC === v.COMMANDS_TOPIC) problems.push('EVENTS_TOPIC and COMMANDS_TOPIC must differ');
  if (v.TOPIC_REPLICATION_FACTOR === 0)
    problems.push("TOPIC_REPLICATION_FACTOR must be -1 (the broker's default) or at least 1, got 0");
  if (v.TOPIC_MIN_INSYNC_REPLICAS === 0)
    problems.push("TOPIC_MIN_INSYNC_REPLICAS must be -1 (the broker's default) or at least 1, got 0");
  const { TOPIC_REPLICATION_FACTOR: rf, TOPIC_MIN_INSYNC_REPLICAS: minIsr } = v;
  if (rf !== undefined && minIsr !== undefined && rf > 0 && minIsr > rf) {
    problems.push(`TOPIC_MIN_INSYNC_REPLICAS (${minIsr}) must not exceed TOPIC_REPLICATION_FACTOR (${rf})`);
  }
  if (v.INSTANCE_ID !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(v.INSTANCE_ID)) {
    problems.push(`INSTANCE_ID must use only [A-Za-z0-9._-], at most 64 characters, got "${v.INSTANCE_ID}"`);
  }
  checkChangelogName(v, problems);
}

/** Never quotes the token: problems are printed at start. */
function checkStateAuth(v: Partial<Static<typeof SERVER_ENV>>, problems: string[]): void {
  const token = v.STATE_API_TOKEN;
  if (v.STATE_API_AUTH === 'off') {
    if (token !== undefined) problems.push('STATE_API_TOKEN is set but STATE_API_AUTH=off: unset one of them');
    // A token refused for its length reaches here unset: it is not also missing.
  } else if (token === undefined && !problems.some((p) => p.startsWith('STATE_API_TOKEN '))) {
    problems.push(
      'STATE_API_TOKEN is required: the bearer token GET /state/:key asks for (STATE_API_AUTH=off serves state without one)',
    );
  }
}
