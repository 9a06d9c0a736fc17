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

  it('reads a nested table into a nested group', () => {
    const env = { SCAN_ROWS_MAX_SCANS: 20, SCAN_ROWS_MAX_AGE_MS: 5, CHUNK_SIZE: 2 };
    const config: { chunkSize: number; scanRows: { maxScans: number; maxAgeMs: number } } = fromEnv(env, {
      chunkSize: 'CHUNK_SIZE',
      scanRows: { maxScans: 'SCAN_ROWS_MAX_SCANS', maxAgeMs: 'SCAN_ROWS_MAX_AGE_MS' },
    });
    expect(config).toEqual({ chunkSize: 2, scanRows: { maxScans: 20, maxAgeMs: 5 } });
  });
});
