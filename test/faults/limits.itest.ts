import { accountsDomain } from '@state-relay/accounts';
import {
  commandIdFor,
  seenOf,
  MAX_REMEMBERED_COMMAND_IDS,
  type StoredEntity,
  type UpdateCommand,
} from '@state-relay/contracts';
import { aggregate, type AggregateInput } from '../../services/processor/src/aggregate';

// What is NOT guaranteed, pinned down so docs/guarantees.md can point at it and a change in
// behaviour is noticed. These run the processor's real aggregate (the one path every input
// takes) in process; no broker is needed.

const account = (version: number, commandIds: string[] = []): StoredEntity => ({
  version,
  value: {
    status: 'active',
    balance: 0,
    createdAt: 0,
    lastActiveAt: 0,
    counters: { events: 1, activities: 0, payments: 0 },
  },
  seen: seenOf(commandIds),
});

function command(
  scanId: string,
  key: string,
  action: UpdateCommand['action'],
  condition: UpdateCommand['condition'] = { field: 'status', op: 'exists' },
): UpdateCommand {
  return { commandId: commandIdFor(scanId, key), scanId, key, asOf: 0, condition, action, issuedAt: 0 };
}

/** Runs inputs through the aggregate as the processor would, one entity. */
function run(key: string, inputs: AggregateInput[], start?: StoredEntity) {
  let current = start;
  const verdicts: string[] = [];
  for (const input of inputs) {
    const { next, verdict } = aggregate(accountsDomain, key, input, current);
    if (next === null) current = undefined;
    else if (next !== undefined) current = next;
    if (verdict) verdicts.push(verdict.outcome);
  }
  return { current, verdicts };
}

describe('limits of idempotence (documented, not guaranteed)', () => {
  it('a command re-delivered within the last 64 command ids of its entity is a duplicate', () => {
    const first = command('scan-0', 'k', { increment: { n: 1 } });
    const others = Array.from({ length: MAX_REMEMBERED_COMMAND_IDS - 1 }, (_, i) =>
      command(`scan-${i + 1}`, 'k', { set: { [`f${i}`]: 1 } }),
    );
    const { current, verdicts } = run(
      'k',
      [first, ...others, first].map((command) => ({ kind: 'command', command })),
      account(1),
    );
    expect(verdicts.at(-1)).toBe('duplicate');
    expect(current!.value.n).toBe(1);
  });

  it('NOT guaranteed: re-delivered after 64 newer commands on the same entity, a command is judged (and applied) again', () => {
    const first = command('scan-0', 'k', { increment: { n: 1 } });
    const others = Array.from({ length: MAX_REMEMBERED_COMMAND_IDS }, (_, i) =>
      command(`scan-${i + 1}`, 'k', { set: { [`f${i}`]: 1 } }),
    );
    const { current, verdicts } = run(
      'k',
      [first, ...others, first].map((command) => ({ kind: 'command', command })),
      account(1),
    );
    expect(verdicts.at(-1)).toBe('applied');
    expect(current!.value.n).toBe(2); // applied twice
  });

  it('NOT guaranteed: a command that deleted an entity, re-delivered after the key was re-created, applies again', () => {
    const del = command('purge', 'k', { delete: true });
    const { current, verdicts } = run(
      'k',
      [
        { kind: 'command', command: del },
        { kind: 'event', event: { type: 'signed_up', at: 5, data: {} } }, // the key comes back
        { kind: 'command', command: del }, // e.g. re-emitted by a restarted scanner
      ],
      account(1),
    );
    expect(verdicts).toEqual(['applied', 'applied']);
    expect(current).toBeUndefined(); // the new entity was deleted by the old command
  });

  it('NOT guaranteed: a command that found no entity is not remembered, so a re-delivery after creation applies', () => {
    const mark = command('early', 'k', { domain: 'mark_dormant' });
    const { current, verdicts } = run('k', [
      { kind: 'command', command: mark },
      { kind: 'event', event: { type: 'signed_up', at: 5, data: {} } },
      { kind: 'command', command: mark },
    ]);
    expect(verdicts).toEqual(['not_found', 'applied']);
    expect(current!.value.status).toBe('dormant');
  });

  it('an expectedVersion refuses a command whose entity changed since the scan read it', () => {
    const guarded = { ...command('scan', 'k', { domain: 'mark_dormant' }), expectedVersion: 1 };
    const { current, verdicts } = run(
      'k',
      [
        { kind: 'event', event: { type: 'activity', at: 5, data: {} } }, // version 1 -> 2
        { kind: 'command', command: guarded },
      ],
      account(1),
    );
    expect(verdicts).toEqual(['version_conflict']);
    expect(current!.value.status).toBe('active');
  });

  it('NOT guaranteed: versions restart at 1 after a delete, so an expectedVersion cannot tell a re-created entity from the old one', () => {
    const guarded = { ...command('purge', 'k', { delete: true }), expectedVersion: 1 };
    const { current, verdicts } = run(
      'k',
      [
        { kind: 'command', command: guarded },
        { kind: 'event', event: { type: 'signed_up', at: 5, data: {} } }, // re-created at version 1
        { kind: 'command', command: guarded },
      ],
      account(1),
    );
    expect(verdicts).toEqual(['applied', 'applied']);
    expect(current).toBeUndefined();
  });
});
