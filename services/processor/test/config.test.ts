import { ConfigError, loadConfig } from '../src/config';

describe('processor config', () => {
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

  it('requires the brokers', () => {
    expect(() => loadConfig({})).toThrow(/KAFKA_BROKERS is required/);
  });
});
