import { logLevel } from 'kafkajs';
import pino from 'pino';
import { createKafkaClient, kafkaLogCreator } from '../src';

function collect() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { lines, logger };
}

describe('kafkajs lines in pino', () => {
  it('go one level down, with the message as msg and the rest under kafkajs', () => {
    const { lines, logger } = collect();
    const log = kafkaLogCreator(logger)();
    const entry = (level: logLevel, message: string) => ({
      namespace: 'Connection',
      level,
      label: 'x',
      log: { message, timestamp: 't', broker: 'k:1' },
    });
    log(entry(logLevel.ERROR, 'connection refused'));
    log(entry(logLevel.WARN, 'retrying'));
    log(entry(logLevel.INFO, 'joined'));
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, 'connection refused'],
      [30, 'retrying'],
      [20, 'joined'],
    ]);
    expect(lines[0]!.kafkajs).toEqual({ timestamp: 't', broker: 'k:1' });
  });

  it('come from the client factory under component "kafkajs"', async () => {
    const { lines, logger } = collect();
    const kafka = createKafkaClient({ clientId: 'test', brokers: ['127.0.0.1:1'], logger });
    kafka.logger().error('from the client', {});
    expect(lines.at(-1)).toMatchObject({ component: 'kafkajs', msg: 'from the client', level: 40 });
  });
});
