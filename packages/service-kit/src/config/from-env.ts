/** Which variable each config field is read from; a nested table gives a nested field. */
export type EnvTable<E> = { readonly [field: string]: keyof E | EnvTable<E> };

/** The config an EnvTable gives, each field typed as its variable is. */
export type FromEnv<E, M> = { -readonly [K in keyof M]: M[K] extends keyof E ? E[M[K]] : FromEnv<E, M[K]> };

/**
 * A service's config from its validated environment, field by field: `names` maps each config
 * field to the variable it is read from, e.g. `{ brokers: 'KAFKA_BROKERS' }` gives
 * `{ brokers: values.KAFKA_BROKERS }`, typed as the variable is; `{ scanRows: { maxScans:
 * 'SCAN_ROWS_MAX_SCANS' } }` gives a nested group. Derived fields are added by the caller.
 */
export function fromEnv<E extends object, const M extends EnvTable<E>>(values: E, names: M): FromEnv<E, M> {
  const config: Record<string, unknown> = {};
  for (const [field, name] of Object.entries(names)) {
    config[field] = typeof name === 'object' ? fromEnv(values, name as EnvTable<E>) : values[name as keyof E];
  }
  return config as FromEnv<E, M>;
}

/** The fields both services read from the same variables (each service's README documents them). */
export const SHARED_CONFIG_FROM_ENV = {
  brokers: 'KAFKA_BROKERS',
  appId: 'APP_ID',
  storeName: 'STORE_NAME',
  commandsTopic: 'COMMANDS_TOPIC',
  resultsTopic: 'RESULTS_TOPIC',
  stateDir: 'STATE_DIR',
  httpHost: 'HTTP_HOST',
  httpPort: 'HTTP_PORT',
  logLevel: 'LOG_LEVEL',
} as const;
