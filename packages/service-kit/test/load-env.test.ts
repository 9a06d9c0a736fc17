import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { ConfigError, EnvVar, loadEnv } from '../src';

const schema = Type.Object({
  KAFKA_BROKERS: EnvVar.brokers(),
  APP_ID: EnvVar.kafkaName('state-relay'),
  EVENTS_TOPIC: EnvVar.topic('events'),
  PARTITIONS: EnvVar.integer({ default: 6, minimum: 1, maximum: 1000 }),
  LOG_LEVEL: EnvVar.logLevel(),
  MODE: EnvVar.oneOf(['token', 'off'], { default: 'token', problem: 'must be "token" or "off"' }),
  TOKEN: EnvVar.secret({ minLength: 16, problem: 'must be at least 16 characters (got {length})' }),
  STATE_DIR: EnvVar.text({ default: './data' }),
});

function problemsOf(env: NodeJS.ProcessEnv, refine?: Parameters<typeof loadEnv<typeof schema>>[2]): string[] {
  try {
    loadEnv(schema, env, refine);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const good = { KAFKA_BROKERS: 'kafka:9092', TOKEN: 'a-token-long-enough' };

describe('loading a service environment from its schema', () => {
  it('fills the defaults and types each value', () => {
    expect(loadEnv(schema, good)).toEqual({
      KAFKA_BROKERS: ['kafka:9092'],
      APP_ID: 'state-relay',
      EVENTS_TOPIC: 'events',
      PARTITIONS: 6,
      LOG_LEVEL: 'info',
      MODE: 'token',
      TOKEN: 'a-token-long-enough',
      STATE_DIR: './data',
    });
  });

  it('drops surrounding whitespace, counts an empty value as unset and splits a list at commas', () => {
    const c = loadEnv(schema, { ...good, KAFKA_BROKERS: ' a:1, b:2 ,', PARTITIONS: ' 12 ', STATE_DIR: '  ' });
    expect(c).toMatchObject({ KAFKA_BROKERS: ['a:1', 'b:2'], PARTITIONS: 12, STATE_DIR: './data' });
  });

  it('reads only the env it is given and only the schema variables', () => {
    process.env.PARTITIONS = '999';
    try {
      const c = loadEnv(schema, { ...good, UNRELATED: 'x' });
      expect(c.PARTITIONS).toBe(6);
      expect(c).not.toHaveProperty('UNRELATED');
    } finally {
      delete process.env.PARTITIONS;
    }
  });

  it('reports every bad value at once, by name, in the schema order', () => {
    expect(
      problemsOf({
        TOKEN: 'a-token-long-enough',
        LOG_LEVEL: 'loud',
        PARTITIONS: 'zero',
        EVENTS_TOPIC: 'bad topic!',
        APP_ID: 'a/b',
        MODE: 'none',
      }),
    ).toEqual([
      'KAFKA_BROKERS is required',
      'APP_ID must use only [A-Za-z0-9._-], got "a/b"',
      'EVENTS_TOPIC must be a Kafka topic name ([A-Za-z0-9._-], at most 249 chars), got "bad topic!"',
      'PARTITIONS must be an integer from 1 to 1000, got "zero"',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      'MODE must be "token" or "off", got "none"',
    ]);
  });

  it('names each bad entry of a list', () => {
    expect(problemsOf({ ...good, KAFKA_BROKERS: 'a:1,nohostport,b' })).toEqual([
      'KAFKA_BROKERS entries must be host:port, got "nohostport"',
      'KAFKA_BROKERS entries must be host:port, got "b"',
    ]);
    expect(problemsOf({ ...good, KAFKA_BROKERS: ' , ' })).toEqual(['KAFKA_BROKERS is required']);
  });

  it('rejects integers out of range or not whole, quoting the value as given', () => {
    expect(problemsOf({ ...good, PARTITIONS: '1001' })).toEqual([
      'PARTITIONS must be an integer from 1 to 1000, got "1001"',
    ]);
    expect(problemsOf({ ...good, PARTITIONS: '1.5' })).toEqual([
      'PARTITIONS must be an integer from 1 to 1000, got "1.5"',
    ]);
  });

  it('reports a short secret by its length, never quoting it', () => {
    const problems = problemsOf({ ...good, TOKEN: 'sekrit-42' });
    expect(problems).toEqual(['TOKEN must be at least 16 characters (got 9)']);
    expect(problems.join()).not.toContain('sekrit-42');
    expect(() => EnvVar.secret({ minLength: 1, problem: 'got {value}' })).toThrow(/never be quoted/);
  });

  it('runs the cross-variable checks on the good values and the defaults of the bad ones', () => {
    const seen: unknown[] = [];
    const problems = problemsOf({ ...good, PARTITIONS: 'zero', APP_ID: 'app' }, (values, found) => {
      seen.push(values);
      if (values.MODE === 'token') found.push('MODE and TOKEN: a cross-variable problem');
    });
    expect(seen).toEqual([expect.objectContaining({ PARTITIONS: 6, APP_ID: 'app', KAFKA_BROKERS: ['kafka:9092'] })]);
    expect(problems).toEqual([
      'PARTITIONS must be an integer from 1 to 1000, got "zero"',
      'MODE and TOKEN: a cross-variable problem',
    ]);
  });

  it('says so in one message, a line per problem', () => {
    const err = new ConfigError(['A is required', 'B must be …']);
    expect(err.message).toBe('invalid configuration:\n  - A is required\n  - B must be …');
    expect(err.code).toBe('CONFIG_INVALID');
  });
});

describe('a secret from a file (NAME_FILE, the Docker and Kubernetes secrets convention)', () => {
  const withFile = Type.Object({
    TOKEN: Type.Optional(EnvVar.secret({ minLength: 16, problem: 'must be at least 16 characters (got {length})' })),
    TOKEN_FILE: Type.Optional(EnvVar.fileOf('TOKEN')),
  });
  const dir = mkdtempSync(join(tmpdir(), 'load-env-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const problems = (env: NodeJS.ProcessEnv) => {
    try {
      loadEnv(withFile, env);
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
  };

  it('takes the value from the file, its trailing newline dropped', () => {
    const path = file('token', 'a-token-from-a-file\n');
    expect(loadEnv(withFile, { TOKEN_FILE: path })).toEqual({ TOKEN: 'a-token-from-a-file', TOKEN_FILE: path });
  });

  it('checks the file’s value as the variable’s own, never quoting it', () => {
    const found = problems({ TOKEN_FILE: file('short', 'sekrit-42\n') });
    expect(found).toEqual(['TOKEN must be at least 16 characters (got 9)']);
    expect(found.join()).not.toContain('sekrit-42');
  });

  it('refuses both set, a missing file and an empty one, naming the variables and the path', () => {
    const path = file('both', 'a-token-from-a-file');
    expect(problems({ TOKEN: 'a-token-long-enough', TOKEN_FILE: path })).toEqual([
      'TOKEN and TOKEN_FILE are both set: set one of them',
    ]);
    expect(problems({ TOKEN_FILE: join(dir, 'missing') })).toEqual([
      `TOKEN_FILE: cannot read ${join(dir, 'missing')} (ENOENT)`,
    ]);
    const empty = file('empty', ' \n');
    expect(problems({ TOKEN_FILE: empty })).toEqual([`TOKEN_FILE names an empty file: ${empty}`]);
  });
});
