import type { UpdateCommand } from '@state-relay/contracts';
import type { Kafka, Producer } from 'kafkajs';
import pino from 'pino';
import { CommandSendError, CommandSender } from '../src/scans/command-sender';

// The producer-replacement logic alone; the real black-holed connection is
// test/faults/regressions.itest.ts (a partitioned scanner healed at a new address).

type Behaviour = 'hang' | 'ok' | 'fail';

function fakeKafka(behaviours: Behaviour[]) {
  const made: { sends: number; disconnected: boolean }[] = [];
  const kafka = {
    producer: () => {
      const mine = { sends: 0, disconnected: false };
      made.push(mine);
      const behaviour = behaviours[made.length - 1] ?? 'ok';
      return {
        connect: async () => undefined,
        disconnect: async () => {
          mine.disconnected = true;
        },
        send: () => {
          mine.sends++;
          if (behaviour === 'hang') return new Promise(() => undefined);
          if (behaviour === 'fail') return Promise.reject(Object.assign(new Error('broken pipe'), { retriable: true }));
          return Promise.resolve([]);
        },
      } as unknown as Producer;
    },
  } as unknown as Kafka;
  return { kafka, made };
}

const command: UpdateCommand = {
  commandId: 'c1',
  scanId: 's1',
  key: 'k1',
  asOf: 0,
  condition: { field: 'status', op: 'eq', value: 'dormant' },
  action: { set: { status: 'closed' } },
  issuedAt: 0,
};
const logger = pino({ level: 'silent' });

describe('CommandSender', () => {
  it('gives up on a send with no acknowledgement in time, retriably, and the next send uses a new producer', async () => {
    const { kafka, made } = fakeKafka(['hang', 'ok']);
    const reasons: string[] = [];
    const sender = new CommandSender(kafka, 'commands', logger, {
      sendTimeoutMs: 50,
      onReplaced: (r) => reasons.push(r),
    });
    const err = await sender.send([command]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandSendError);
    expect((err as CommandSendError).retriable).toBe(true);
    expect((err as Error).message).toMatch(/no acknowledgement within 50 ms/);
    expect(reasons).toEqual(['timed_out']);
    expect(made[0]?.disconnected).toBe(true);

    await sender.send([command]);
    expect(made).toHaveLength(2);
    expect(made[1]?.sends).toBe(1);
    await sender.send([command]);
    expect(made).toHaveLength(2); // a healthy producer is kept
    expect(made[1]?.sends).toBe(2);
    await sender.disconnect();
  });

  it('replaces the producer after a failed send and keeps the cause’s retriable flag', async () => {
    const { kafka, made } = fakeKafka(['fail', 'ok']);
    const reasons: string[] = [];
    const sender = new CommandSender(kafka, 'commands', logger, { onReplaced: (r) => reasons.push(r) });
    const err = await sender.send([command]).catch((e: unknown) => e);
    expect((err as CommandSendError).retriable).toBe(true);
    expect((err as Error).message).toMatch(/broken pipe/);
    expect(reasons).toEqual(['failed']);
    await sender.send([command]);
    expect(made).toHaveLength(2);
    await sender.disconnect();
  });
});
