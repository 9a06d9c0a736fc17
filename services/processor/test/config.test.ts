import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, configTableDrift } from '@state-relay/service-kit';
import { loadConfig, loadServerConfig, SERVER_ENV } from '../src/config';

const TOKEN = 'state-read-token-0123456789';

function problemsOf(load: () => unknown): string {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.join('\n');
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('processor config', () => {
  it("is what README.md's configuration table says: every variable, with its default", () => {
    const readme = readFileSync(join(__dirname, '../README.md'), 'utf8');
    expect(configTableDrift(SERVER_ENV, readme)).toEqual([]);
  });

  it('has sensible defaults and derives the changelog name Kafka Streams would use', () => {
    const c = loadConfig({ KAFKA_BROKERS: 'kafka:9092' });
    expect(c.brokers).toEqual(['kafka:9092']);
    expect(c.changelogTopic).toBe('state-relay-accounts-changelog');
    expect(c.partitions).toBe(6);
    expect(c.httpPort).toBe(8080);
  });

  it('reports every bad value at once, each with its variable name', () => {
    let error: unknown;
    try {
      loadConfig({
        KAFKA_BROKERS: 'nohostport',
        PARTITIONS: 'zero',
        HTTP_PORT: '70000',
        EVENTS_TOPIC: 'bad topic!',
        LOG_LEVEL: 'loud',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/KAFKA_BROKERS entries must be host:port, got "nohostport"/);
    expect(problems).toMatch(/PARTITIONS must be an integer from 1 to 1000, got "zero"/);
    expect(problems).toMatch(/HTTP_PORT must be an integer from 0 to 65535/);
    expect(problems).toMatch(/EVENTS_TOPIC must be a Kafka topic name/);
    expect(problems).toMatch(/LOG_LEVEL must be one of/);
  });

  it('fences the legacy v1 transactional ids by default (EXACTLY_ONCE_LEGACY_FENCE), and takes only true or false', () => {
    expect(loadConfig({ KAFKA_BROKERS: 'kafka:9092' }).exactlyOnceLegacyFence).toBe('true');
    expect(loadConfig({ KAFKA_BROKERS: 'kafka:9092', EXACTLY_ONCE_LEGACY_FENCE: 'false' }).exactlyOnceLegacyFence).toBe(
      'false',
    );
    expect(problemsOf(() => loadConfig({ KAFKA_BROKERS: 'kafka:9092', EXACTLY_ONCE_LEGACY_FENCE: 'no' }))).toMatch(
      /EXACTLY_ONCE_LEGACY_FENCE must be "true" .* or "false"/,
    );
  });

  it('requires the brokers', () => {
    expect(() => loadConfig({})).toThrow(/KAFKA_BROKERS is required/);
  });

  it('checks the settings against each other, also when another value is bad', () => {
    const problems = problemsOf(() =>
      loadConfig({
        KAFKA_BROKERS: 'kafka:9092',
        PARTITIONS: 'zero',
        COMMIT_MAX_RECORDS: '60000',
        COMMIT_INTERVAL_MS: '60000',
        EVENTS_TOPIC: 'same',
        COMMANDS_TOPIC: 'same',
      }),
    );
    expect(problems.split('\n')).toEqual([
      'PARTITIONS must be an integer from 1 to 1000, got "zero"',
      'MAX_UNCOMMITTED_RECORDS (50000) must be at least COMMIT_MAX_RECORDS (60000)',
      'COMMIT_INTERVAL_MS (60000) must be lower than TRANSACTION_TIMEOUT_MS (60000)',
      'EVENTS_TOPIC and COMMANDS_TOPIC must differ',
    ]);
  });

  it('takes the topic settings, and refuses a replication factor of 0 or min.insync.replicas above it', () => {
    const config = loadConfig({
      KAFKA_BROKERS: 'kafka:9092',
      TOPICS_CREATE: 'false',
      TOPIC_REPLICATION_FACTOR: '3',
      TOPIC_MIN_INSYNC_REPLICAS: '2',
    });
    expect([config.topicsCreate, config.topicReplicationFactor, config.topicMinInsyncReplicas]).toEqual([
      'false',
      3,
      2,
    ]);
    expect(loadConfig({ KAFKA_BROKERS: 'kafka:9092' })).toMatchObject({
      topicsCreate: 'true',
      topicReplicationFactor: -1,
      topicMinInsyncReplicas: -1,
    });
    expect(
      problemsOf(() =>
        loadConfig({ KAFKA_BROKERS: 'kafka:9092', TOPIC_REPLICATION_FACTOR: '0', TOPIC_MIN_INSYNC_REPLICAS: '0' }),
      ).split('\n'),
    ).toEqual([
      "TOPIC_REPLICATION_FACTOR must be -1 (the broker's default) or at least 1, got 0",
      "TOPIC_MIN_INSYNC_REPLICAS must be -1 (the broker's default) or at least 1, got 0",
    ]);
    expect(
      problemsOf(() =>
        loadConfig({ KAFKA_BROKERS: 'kafka:9092', TOPIC_REPLICATION_FACTOR: '2', TOPIC_MIN_INSYNC_REPLICAS: '3' }),
      ),
    ).toBe('TOPIC_MIN_INSYNC_REPLICAS (3) must not exceed TOPIC_REPLICATION_FACTOR (2)');
  });

  it('refuses an APP_ID and STORE_NAME whose changelog name Kafka would not take', () => {
    expect(
      problemsOf(() => loadConfig({ KAFKA_BROKERS: 'k:1', APP_ID: 'a'.repeat(200), STORE_NAME: 'b'.repeat(40) })),
    ).toMatch(/^APP_ID and STORE_NAME: changelog topic name 251 characters exceeds Kafka's limit of 249$/);
  });

  it('keeps the commit-cycle settings the processor core reads', () => {
    const c = loadConfig({ KAFKA_BROKERS: 'kafka:9092', COMMIT_INTERVAL_MS: '250', COMMIT_MAX_RECORDS: '500' });
    expect(c).toMatchObject({ commitIntervalMs: 250, commitMaxRecords: 500, maxUncommittedRecords: 50_000 });
    expect(c.fetchMaxBytesPerPartition).toBe(262_144);
  });
});

describe('processor server config: reading state needs a token unless turned off explicitly', () => {
  const base = { KAFKA_BROKERS: 'kafka:9092' };

  it('requires STATE_API_TOKEN by default, and names how to turn the check off', () => {
    const problems = problemsOf(() => loadServerConfig(base));
    expect(problems).toMatch(/STATE_API_TOKEN is required/);
    expect(problems).toMatch(/STATE_API_AUTH=off/);
  });

  it('takes the token for GET /state/:key', () => {
    const c = loadServerConfig({ ...base, STATE_API_TOKEN: ` ${TOKEN}\n` });
    expect(c.stateAuth).toEqual({ kind: 'bearer', token: TOKEN });
    expect(c.brokers).toEqual(['kafka:9092']);
  });

  it('takes the token from the file STATE_API_TOKEN_FILE names (a mounted secret)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'processor-config-'));
    try {
      const file = join(dir, 'token');
      writeFileSync(file, `${TOKEN}\n`);
      expect(loadServerConfig({ ...base, STATE_API_TOKEN_FILE: file }).stateAuth).toEqual({
        kind: 'bearer',
        token: TOKEN,
      });
      expect(problemsOf(() => loadServerConfig({ ...base, STATE_API_TOKEN_FILE: join(dir, 'none') }))).toMatch(
        /STATE_API_TOKEN_FILE: cannot read .*none \(ENOENT\)/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves state without a token only with STATE_API_AUTH=off', () => {
    expect(loadServerConfig({ ...base, STATE_API_AUTH: 'off' }).stateAuth).toEqual({ kind: 'off' });
  });

  it('reports a short token, an unknown mode and a contradiction by name, never quoting the token', () => {
    const short = 'short-secret';
    expect(problemsOf(() => loadServerConfig({ ...base, STATE_API_TOKEN: short }))).toMatch(
      /STATE_API_TOKEN must be at least 16 characters, got 12/,
    );
    expect(problemsOf(() => loadServerConfig({ ...base, STATE_API_TOKEN: short }))).not.toContain(short);
    expect(problemsOf(() => loadServerConfig({ ...base, STATE_API_AUTH: 'none' }))).toMatch(
      /STATE_API_AUTH must be "token" \(the default\) or "off", got "none"/,
    );
    const both = problemsOf(() => loadServerConfig({ ...base, STATE_API_AUTH: 'off', STATE_API_TOKEN: TOKEN }));
    expect(both).toMatch(/STATE_API_TOKEN is set but STATE_API_AUTH=off/);
    expect(both).not.toContain(TOKEN);
  });

  it('reports the token problem together with every other bad value', () => {
    const problems = problemsOf(() => loadServerConfig({ PARTITIONS: 'zero' }));
    expect(problems).toMatch(/KAFKA_BROKERS is required/);
    expect(problems).toMatch(/PARTITIONS must be an integer/);
    expect(problems).toMatch(/STATE_API_TOKEN is required/);
  });

  it('leaves loadConfig (the processor without an HTTP surface, e.g. the benchmark) without the token', () => {
    expect(loadConfig(base)).not.toHaveProperty('stateAuth');
  });
});
