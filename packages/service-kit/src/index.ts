// The edges both services share: config from one schema, the logger, the Kafka client, the
// process around a service, the HTTP base (error contract, health, metrics, OpenAPI, request
// metrics) and the default metrics. Only the services' edge modules (config, server, app,
// metrics, errors) use it.
export { configTableDrift, readConfigTable, type DocumentedVariable } from './config/config-table';
export {
  checkChangelogName,
  KNOWN_PLACEHOLDER_TOKENS,
  MIN_TOKEN_LENGTH,
  TOKEN_RECIPE,
  tokenStrengthProblem,
} from './config/checks';
export { fromEnv, SHARED_CONFIG_FROM_ENV, type EnvTable, type FromEnv } from './config/from-env';
export { EnvVar, LOG_LEVELS, PROBLEM_KEYWORD, type LogLevel } from './config/env-vars';
export { loadEnv, type EnvRefinement } from './config/load-env';
export {
  KAFKA_CONNECTION_ENV,
  kafkaConnectionFrom,
  kafkajsSecurity,
  SASL_MECHANISMS,
  SECURITY_PROTOCOLS,
  type KafkaConnection,
  type KafkaConnectionEnv,
  type SaslMechanism,
  type SecurityProtocol,
} from './config/kafka-connection';
export {
  CONFIG_INVALID,
  ConfigError,
  describeIssues,
  HTTP_ERRORS,
  isRetriable,
  ServiceError,
  type ErrorMeaning,
  type ErrorTable,
  type FieldIssue,
  type HttpErrorCode,
} from './errors';
export { BEARER_BLANKS_ALLOWED, bearerToken, requireBearer, tokensMatch } from './http/bearer';
export {
  HTTP_REQUEST_LABELS,
  httpRequestDuration,
  UNMATCHED_ROUTE,
  type HttpRequestDuration,
  type HttpRequestLabel,
  type ServiceHttpMetrics,
} from './http/request-metrics';
export { HTTP_SERVER_LIMITS, type HttpServerLimits } from './http/server-limits';
export { toErrorReply, validationIssues, type ErrorBody, type ErrorReply } from './http/error-reply';
export { documentedAs, forDocumentation, literals, Nullable } from './http/schema-helpers';
export {
  createServiceApp,
  ErrorBodySchema,
  serviceHttp,
  type Readiness,
  type ServiceAppOptions,
  type ServiceHttpOptions,
} from './http/service-app';
export {
  checkKafkaConnection,
  connectionRefusal,
  connectionWarnings,
  createKafkaClient,
  KAFKA_CONNECTION_REFUSED,
  KAFKA_RETRY,
  KafkaConnectionRefusedError,
  kafkaLogCreator,
  type KafkaClientOptions,
} from './kafka';
export { createServiceLogger, REDACTED_PATHS, type ServiceLoggerOptions } from './logger';
export { createServiceRegistry, LATENCY_BUCKETS, metricFactory, type MetricFactory } from './metrics';
export { metricsTableDrift, readMetricsTable, type DocumentedMetric } from './metrics-table';
export { FORCE_EXIT_MS, runService, type ServiceDefinition, type ServiceLifecycle } from './run-service';
