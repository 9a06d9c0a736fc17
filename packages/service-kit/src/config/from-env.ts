/**
 * A service's config from its validated environment, field by field: `names` maps each config
 * field to the variable it is read from, e.g. `{ brokers: 'KAFKA_BROKERS' }` gives
 * `{ brokers: values.KAFKA_BROKERS }`, typed as the variable is. Derived fields are added by the caller.
 */
export function fromEnv<E extends object, const M extends Record<string, keyof E>>(
  values: E,
  names: M,
): { -readonly [K in keyof M]: E[M[K]] } {
  const config = {} as { -readonly [K in keyof M]: E[M[K]] };
  for (const field of Object.keys(names) as Array<keyof M>) config[field] = values[names[field]];
  return config;
}
