import { fromEnv } from '../src';

describe('fromEnv', () => {
  it('reads each config field from the variable it names, and nothing else', () => {
    const env = { KAFKA_BROKERS: ['b:9092'], HTTP_PORT: 8080, UNUSED: 'x' };
    const config: { brokers: string[]; httpPort: number } = fromEnv(env, {
      brokers: 'KAFKA_BROKERS',
      httpPort: 'HTTP_PORT',
    });
    expect(config).toEqual({ brokers: ['b:9092'], httpPort: 8080 });
  });
});
