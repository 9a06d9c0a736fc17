// Builders for the variables of a service's environment schema. Each is a TypeBox schema (its
// JSON schema is what env-schema validates; its type is what the service reads) carrying the
// sentence a bad value is reported with, after the variable's name.
import { Type, type TArray, type TInteger, type TString, type TUnsafe } from '@sinclair/typebox';
import { MIN_TOKEN_LENGTH } from './checks';

/** The schema keyword holding a variable's problem sentence; `{value}` and `{length}` are filled in. */
export const PROBLEM_KEYWORD = 'x-problem';

/**
 * The schema keyword of a `NAME_FILE` variable: the file it names holds the value of NAME (the
 * Docker and Kubernetes secrets convention); loadEnv reads it, once, at start.
 */
export const FILE_OF_KEYWORD = 'x-file-of';

/**
 * The schema keyword of a bearer token (EnvVar.token): loadEnv refuses a known placeholder or a
 * guessable value (tokenStrengthProblem), naming the variable, never quoting the value.
 */
export const TOKEN_KEYWORD = 'x-token';

/** Kafka topic, group and id names: what Kafka accepts in a topic name. */
const KAFKA_NAME = '^[A-Za-z0-9._-]{1,249}$';
const HOST_PORT = '^[^:\\s]+:\\d{1,5}$';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

interface Described {
  description?: string;
}

export const EnvVar = {
  /** Free text; `default` makes it optional. */
  text(options: Described & { default?: string } = {}): TString {
    return Type.String(options);
  },

  /** A whole number in [minimum, maximum]. */
  integer(options: Described & { default: number; minimum: number; maximum: number }): TInteger {
    const { minimum, maximum } = options;
    return Type.Integer({
      ...options,
      [PROBLEM_KEYWORD]: `must be an integer from ${minimum} to ${maximum}, got "{value}"`,
    });
  },

  port(defaultPort: number, description?: string): TInteger {
    return EnvVar.integer({ default: defaultPort, minimum: 0, maximum: 65535, description });
  },

  /** An application, store or instance name: characters Kafka accepts in a topic name. */
  kafkaName(defaultName: string, description?: string): TString {
    const problem = 'must use only [A-Za-z0-9._-], got "{value}"';
    return Type.String({ default: defaultName, pattern: KAFKA_NAME, description, [PROBLEM_KEYWORD]: problem });
  },

  topic(defaultTopic: string, description?: string): TString {
    const problem = 'must be a Kafka topic name ([A-Za-z0-9._-], at most 249 chars), got "{value}"';
    return Type.String({ default: defaultTopic, pattern: KAFKA_NAME, description, [PROBLEM_KEYWORD]: problem });
  },

  /** One of a few words; `problem` replaces the default "must be one of …" sentence. */
  oneOf<const V extends readonly string[]>(
    values: V,
    options: Described & { default: V[number]; problem?: string },
  ): TUnsafe<V[number]> {
    const { problem, ...rest } = options;
    return Type.Unsafe<V[number]>({
      ...rest,
      type: 'string',
      enum: [...values],
      [PROBLEM_KEYWORD]: `${problem ?? `must be one of ${values.join(', ')}`}, got "{value}"`,
    });
  },

  logLevel(): TUnsafe<LogLevel> {
    return EnvVar.oneOf(LOG_LEVELS, { default: 'info', description: 'pino level' });
  },

  /** `host:port[,host:port]`, required. */
  brokers(): TArray<TString> {
    return Type.Array(Type.String({ pattern: HOST_PORT }), {
      minItems: 1,
      description: 'host:port[,host:port]',
      [PROBLEM_KEYWORD]: 'entries must be host:port, got "{value}"',
    });
  },

  /**
   * A bearer token: at least MIN_TOKEN_LENGTH characters, not a placeholder, not guessable, never
   * quoted back. `problem` words the length as a service has always reported it (its tests match it).
   */
  token(options: { description: string; problem?: string }): TString {
    const { description, problem = `must be at least ${MIN_TOKEN_LENGTH} characters, got {length}` } = options;
    return Type.String({
      ...EnvVar.secret({ minLength: MIN_TOKEN_LENGTH, problem, description }),
      [TOKEN_KEYWORD]: true,
    });
  },

  /**
   * `NAME_FILE`: a path whose file holds the secret NAME (surrounding whitespace dropped), instead
   * of NAME itself; setting both is a problem. The value is then checked as NAME's own would be.
   */
  fileOf(name: string): TString {
    return Type.String({ description: `file holding ${name}`, [FILE_OF_KEYWORD]: name });
  },

  /** A secret checked by length only: its problem sentence may say `{length}`, never `{value}`. */
  secret(options: { minLength: number; problem: string; description?: string }): TString {
    const { problem, ...rest } = options;
    if (problem.includes('{value}')) throw new Error('a secret must never be quoted in a config problem');
    return Type.String({ ...rest, [PROBLEM_KEYWORD]: problem });
  },
};
