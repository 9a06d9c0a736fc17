import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, configTableDrift } from '@state-relay/service-kit';
import { loadConfig, SCANNER_ENV } from '../src/config';

const TOKEN = 'a-long-enough-token-123';

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('scanner config', () => {
  it("is what README.md's configuration table says: every variable, with its default", () => {
    const readme = readFileSync(join(__dirname, '../README.md'), 'utf8');
    expect(configTableDrift(SCANNER_ENV, readme)).toEqual([]);
  });

  it('takes SCAN_LATENCY_BUDGET as a ratio (default 1.2x), milliseconds or off, and names it when it is neither', () => {
    const base = { KAFKA_BROKERS: 'kafka:9092', API_TOKEN: TOKEN };
    expect(loadConfig(base).latencyBudget).toEqual({ ratio: 1.2 });
    expect(loadConfig({ ...base, SCAN_LATENCY_BUDGET: '1.5x' }).latencyBudget).toEqual({ ratio: 1.5 });
    expect(loadConfig({ ...base, SCAN_LATENCY_BUDGET: '300ms' }).latencyBudget).toEqual({ p99Ms: 300 });
    expect(loadConfig({ ...base, SCAN_LATENCY_BUDGET: 'off' }).latencyBudget).toEqual({ off: true });
    expect(problemsOf({ ...base, SCAN_LATENCY_BUDGET: '300' })).toEqual([
      'SCAN_LATENCY_BUDGET must be a ratio of the event p99 before the scan (e.g. 1.2x), a p99 in milliseconds (e.g. 300ms) or off, got "300"',
    ]);
    expect(problemsOf({ ...base, SCAN_LATENCY_BUDGET: '1x' })).toEqual([
      'SCAN_LATENCY_BUDGET must be a ratio from 1.05x to 100x, got "1x"',
    ]);
    expect(problemsOf({ ...base, SCAN_LATENCY_BUDGET: '0ms' })).toEqual([
      'SCAN_LATENCY_BUDGET must be milliseconds from 1ms to 600000ms, got "0ms"',
    ]);
  });

  it('takes API_TOKEN from the file API_TOKEN_FILE names (a mounted secret), never both', () => {
    const dir = mkdtempSync(join(tmpdir(), 'scanner-config-'));
    try {
      const file = join(dir, 'token');
      writeFileSync(file, `${TOKEN}\n`);
      expect(loadConfig({ KAFKA_BROKERS: 'kafka:9092', API_TOKEN_FILE: file }).apiToken).toBe(TOKEN);
      const both = problemsOf({ KAFKA_BROKERS: 'kafka:9092', API_TOKEN: TOKEN, API_TOKEN_FILE: file });
      expect(both).toEqual(['API_TOKEN and API_TOKEN_FILE are both set: set one of them']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has the documented defaults and derives the changelog name from APP_ID and STORE_NAME', () => {
    const c = loadConfig({ KAFKA_BROKERS: 'kafka:9092', API_TOKEN: TOKEN });
    expect(c).toMatchObject({
      brokers: ['kafka:9092'],
      scanMaxDurationMs: 86_400_000, // 24 h: issue 34 item 8
      appId: 'state-relay',
      changelogTopic: 'state-relay-accounts-changelog',
      commandsTopic: 'accounts-commands',
      resultsTopic: 'accounts-command-results',
      stateDir: './data/scanner',
      httpHost: '0.0.0.0',
      httpPort: 8081,
      logLevel: 'info',
      maxCommandLag: 10_000,
      chunkSize: 2_000,
      maxBodyBytes: 65_536,
      scannerId: 'scanner',
      replicaCatchUpTimeoutMs: 120_000,
      scheduleMinIntervalMs: 60_000,
    });
    expect(c.replicaPath).toBe('data/scanner/replica.sqlite');
    expect(c.scansPath).toBe('data/scanner/scans.sqlite');
  });

  it('reports every bad value at once, each with its variable name', () => {
    const problems = problemsOf({
      KAFKA_BROKERS: 'nohostport',
      API_TOKEN: TOKEN,
      HTTP_PORT: '70000',
      CHUNK_SIZE: '0',
      MAX_COMMAND_LAG: 'lots',
      MAX_BODY_BYTES: '1.5',
      COMMANDS_TOPIC: 'bad topic!',
      SCANNER_ID: 'a/b',
      LOG_LEVEL: 'loud',
    }).join('\n');
    expect(problems).toMatch(/KAFKA_BROKERS entries must be host:port, got "nohostport"/);
    expect(problems).toMatch(/HTTP_PORT must be an integer from 0 to 65535, got "70000"/);
    expect(problems).toMatch(/CHUNK_SIZE must be an integer from 1 to 100000, got "0"/);
    expect(problems).toMatch(/MAX_COMMAND_LAG must be an integer/);
    expect(problems).toMatch(/MAX_BODY_BYTES must be an integer/);
    expect(problems).toMatch(/COMMANDS_TOPIC must be a Kafka topic name/);
    expect(problems).toMatch(/SCANNER_ID must use only/);
    expect(problems).toMatch(/LOG_LEVEL must be one of/);
  });

  it('requires the brokers and the API token', () => {
    expect(problemsOf({})).toEqual(['KAFKA_BROKERS is required', 'API_TOKEN is required']);
  });

  it('rejects a short API token without ever quoting it', () => {
    const problems = problemsOf({ KAFKA_BROKERS: 'k:1', API_TOKEN: 'sekrit-42' });
    expect(problems).toEqual(['API_TOKEN must be at least 16 characters (got 9)']);
    expect(problems.join()).not.toContain('sekrit-42');
  });

  it('refuses an APP_ID and STORE_NAME whose changelog name Kafka would not take', () => {
    expect(
      problemsOf({ KAFKA_BROKERS: 'k:1', API_TOKEN: TOKEN, APP_ID: 'a'.repeat(200), STORE_NAME: 'b'.repeat(40) }),
    ).toEqual(["APP_ID and STORE_NAME: changelog topic name 251 characters exceeds Kafka's limit of 249"]);
  });

  it('refuses the same topic for commands and results', () => {
    expect(problemsOf({ KAFKA_BROKERS: 'k:1', API_TOKEN: TOKEN, COMMANDS_TOPIC: 't', RESULTS_TOPIC: 't' })).toEqual([
      'COMMANDS_TOPIC and RESULTS_TOPIC must differ',
    ]);
  });

  it('reads PROCESSOR_URLS for the status page, with the scanner’s token unless PROCESSOR_API_TOKEN is set', () => {
    const base = { KAFKA_BROKERS: 'k:1', API_TOKEN: TOKEN };
    expect(loadConfig(base).processors).toEqual({ urls: [], token: TOKEN });
    expect(
      loadConfig({
        ...base,
        PROCESSOR_URLS: ' http://processor:8080, https://p2.example/proc/ ,',
        PROCESSOR_API_TOKEN: 'processor-token-0123456789',
      }).processors,
    ).toEqual({ urls: ['http://processor:8080', 'https://p2.example/proc/'], token: 'processor-token-0123456789' });
    const problems = problemsOf({
      ...base,
      PROCESSOR_URLS: 'processor:8080,ftp://x,http://admin:s3cret@p:8080',
      PROCESSOR_API_TOKEN: 'short',
    }).join('\n');
    expect(problems).toMatch(/PROCESSOR_URLS entries must be http:\/\/ or https:\/\/ .*got "processor:8080"/);
    expect(problems).toMatch(/got "ftp:\/\/x"/);
    expect(problems).toMatch(/PROCESSOR_URLS entries must not hold credentials/);
    expect(problems).toMatch(/PROCESSOR_API_TOKEN must be at least 16 characters/);
    expect(problems).not.toContain('s3cret');
    expect(problems).not.toContain('short');
  });
});
