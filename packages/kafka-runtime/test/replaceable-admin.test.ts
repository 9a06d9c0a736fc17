import type { Admin, Kafka } from 'kafkajs';
import { AdminCallTimeoutError, ReplaceableAdmin } from '../src/replaceable-admin';

// The replacement logic alone; a real black-holed connection is exercised by
// test/faults/regressions.itest.ts (a partitioned scanner healed at a new address).

function fakeKafka(hangingClients: number, failingClients = 0) {
  const made: { calls: number; disconnected: boolean }[] = [];
  const kafka = {
    admin: () => {
      const mine = { calls: 0, disconnected: false };
      const hangs = made.length < hangingClients;
      const fails = !hangs && made.length < hangingClients + failingClients;
      made.push(mine);
      return {
        connect: async () => undefined,
        disconnect: async () => {
          mine.disconnected = true;
        },
        listTopics: () => {
          mine.calls++;
          if (hangs) return new Promise(() => undefined);
          if (fails) return Promise.reject(new Error('Failed to find group coordinator'));
          return Promise.resolve(['a', 'b']);
        },
      } as unknown as Admin;
    },
  } as unknown as Kafka;
  return { kafka, made };
}

describe('ReplaceableAdmin', () => {
  it('gives up on a call with no answer in time and makes the next call on a new client', async () => {
    const { kafka, made } = fakeKafka(1);
    const replaced: string[] = [];
    const admin = new ReplaceableAdmin(kafka, { callTimeoutMs: 50, onReplaced: (c) => replaced.push(c) });
    await expect(admin.listTopics()).rejects.toBeInstanceOf(AdminCallTimeoutError);
    expect(replaced).toEqual(['listTopics']);
    expect(made[0]?.disconnected).toBe(true);
    await expect(admin.listTopics()).resolves.toEqual(['a', 'b']);
    await expect(admin.listTopics()).resolves.toEqual(['a', 'b']);
    expect(made).toHaveLength(2); // a client that answers is kept
    expect(made[1]?.calls).toBe(2);
    await admin.disconnect();
    expect(made[1]?.disconnected).toBe(true);
  });

  it('replaces a client once when several calls on it time out together', async () => {
    const { kafka, made } = fakeKafka(1);
    const replaced: string[] = [];
    const admin = new ReplaceableAdmin(kafka, { callTimeoutMs: 50, onReplaced: (c) => replaced.push(c) });
    await admin.connect();
    const results = await Promise.allSettled([admin.listTopics(), admin.listTopics()]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(replaced).toHaveLength(1);
    await expect(admin.listTopics()).resolves.toEqual(['a', 'b']);
    expect(made).toHaveLength(2);
    await admin.disconnect();
  });

  it('replaces the client after a call that fails', async () => {
    const { kafka, made } = fakeKafka(0, 1);
    const replaced: unknown[] = [];
    const admin = new ReplaceableAdmin(kafka, { onReplaced: (_, err) => replaced.push(err) });
    await expect(admin.listTopics()).rejects.toThrow('Failed to find group coordinator');
    expect(replaced).toHaveLength(1);
    expect(made[0]?.disconnected).toBe(true);
    await expect(admin.listTopics()).resolves.toEqual(['a', 'b']);
    expect(made).toHaveLength(2);
    await admin.disconnect();
  });
});
