import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandIdFor, encodeCommand, encodeEvent } from '@state-relay/contracts';
import { TaskStore } from '@state-relay/store';
import type { KafkaMessage } from 'kafkajs';
import pino from 'pino';
import { createProcessorMetrics } from '../src/metrics';
import type { CommitPort } from '../src/tasks/instance-commit';
import { commandCapOf } from '../src/tasks/command-share';
import { Task, type TaskDeps } from '../src/tasks/task';
import { counterDomain } from './counter-domain';

// Events first (issue 32.2) on one task with fakes around it: the commit port answers at once
// (or when a test lets it), fold time comes from an injected clock that the store's reads
// advance (every record reads its entity), and the consumer is the test's loop.

const EVENTS = 'events';
const COMMANDS = 'commands';

interface Rig {
  task: Task;
  calls: string[];
  /** Per committed unit: the input records it carried, by topic. */
  units: Array<{ events: number; commands: number }>;
  /** Open-unit records at each wake(false): where each fold slice ended. */
  sliceEnds: number[];
  metrics: ReturnType<typeof createProcessorMetrics>;
  /** Fake fold time: each store read adds `costMs`. */
  clock: { now: number; costMs: number };
  /** While set, every commit waits for it. */
  gate: { value?: Promise<void> };
  /** Runs before each store read (an observer of the fold order). */
  onRead: { value?: () => void };
  dir: string;
}

function rig(options: Partial<TaskDeps> = {}): Rig {
  const dir = mkdtempSync(join(tmpdir(), 'events-first-'));
  const calls: string[] = [];
  const units: Rig['units'] = [];
  const sliceEnds: number[] = [];
  const clock = { now: 0, costMs: 0 };
  const gate: Rig['gate'] = {};
  const onRead: Rig['onRead'] = {};
  const metrics = createProcessorMetrics();
  const built: { task?: Task } = {};
  // The instance committer's part: a full unit commits at once, the interval is the test's call.
  const commits: CommitPort = {
    commit: async ({ unit }) => {
      await gate.value;
      units.push({
        events: unit.timestamps.get(EVENTS)?.length ?? 0,
        commands: unit.timestamps.get(COMMANDS)?.length ?? 0,
      });
      return { changes: [], checkpoint: null };
    },
    wake: (full) => {
      calls.push(`wake ${full}`);
      if (full) setImmediate(() => built.task?.commitDue());
      else sliceEnds.push(built.task?.uncommitted ?? 0);
    },
  };
  const task = new Task(0, {
    domain: counterDomain,
    topics: { events: EVENTS, commands: COMMANDS, results: 'results', deadLetter: 'dlq', changelog: 'changelog' },
    groupId: 'group',
    logger: pino({ level: 'silent' }),
    metrics,
    commitIntervalMs: 100,
    commitMaxRecords: 100,
    maxUncommittedRecords: 100_000,
    pause: (t) => calls.push(`pause ${t}`),
    resume: (t) => calls.push(`resume ${t}`),
    pauseCommands: (t) => calls.push(`pause-commands ${t}`),
    resumeCommands: (t) => calls.push(`resume-commands ${t}`),
    onFailure: (_t, failure) => calls.push(`failed ${failure.kind}`),
    commits,
    commandShare: 0.5,
    clock: () => clock.now,
    ...options,
  });
  built.task = task;
  const store = TaskStore.open({ dir, task: 0 });
  const get = store.get.bind(store);
  store.get = (key) => {
    onRead.value?.();
    clock.now += clock.costMs;
    return get(key);
  };
  task.store = store;
  task.transition('RESTORING');
  task.start(
    new Map([
      [EVENTS, 0n],
      [COMMANDS, 0n],
    ]),
  );
  return { task, calls, units, sliceEnds, metrics, clock, gate, onRead, dir };
}

function message(offset: number, key: string, value: Buffer): KafkaMessage {
  return {
    key: Buffer.from(key),
    value,
    offset: String(offset),
    timestamp: String(Date.now()),
    attributes: 0,
    headers: {},
  } as KafkaMessage;
}

function events(from: number, count: number) {
  const messages = Array.from({ length: count }, (_, i) =>
    message(from + i, `event-key-${from + i}`, encodeEvent({ type: 'added', at: 1, data: { amount: 1 } })),
  );
  return { topic: EVENTS, partition: 0, messages, lastOffset: String(from + count - 1) };
}

function commands(from: number, count: number) {
  const messages = Array.from({ length: count }, (_, i) => {
    const key = `key-${(from + i) % 50}`;
    const command = encodeCommand({
      commandId: commandIdFor('scan', `${key}-${from + i}`),
      scanId: 'scan',
      key,
      asOf: 1,
      condition: { field: 'total', op: 'exists' },
      action: { set: { swept: true } },
      issuedAt: 1,
    });
    return message(from + i, key, command);
  });
  return { topic: COMMANDS, partition: 0, messages, lastOffset: String(from + count - 1) };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function sharePauses(r: Rig): Promise<number> {
  return (await r.metrics.commandSharePauses.get()).values[0]?.value ?? 0;
}

describe('events first', () => {
  const rigs: Rig[] = [];
  const make = (options?: Partial<TaskDeps>) => {
    const r = rig(options);
    rigs.push(r);
    return r;
  };
  afterEach(async () => {
    for (const r of rigs.splice(0)) {
      await r.task.close();
      rmSync(r.dir, { recursive: true, force: true });
    }
  });

  it('the command share is ceil(share x COMMIT_MAX_RECORDS) records and share x COMMIT_INTERVAL_MS of fold time; 1 is no cap', () => {
    expect(commandCapOf(0.5, 10_000, 100)).toEqual({ records: 5_000, ms: 50 });
    expect(commandCapOf(0.001, 10, 100)).toEqual({ records: 1, ms: 0.1 });
    expect(commandCapOf(1, 10_000, 100)).toBeUndefined();
  });

  it('a commands batch stops at the share: it resolves what it folded, pauses only the commands partition, asks for the commit and resumes once that unit committed', async () => {
    const r = make();
    // The commit stays in flight until the test lets it go.
    let release = () => undefined as void;
    r.gate.value = new Promise<void>((resolve) => (release = resolve));

    expect(await r.task.foldBatch(commands(0, 120))).toBe('49'); // 50 = ceil(0.5 x 100)
    expect(r.task.positions().get(COMMANDS)).toBe(50n);
    expect(r.calls).toContain('pause-commands 0');
    expect(r.calls).toContain('wake true');
    expect(r.calls).not.toContain('pause 0'); // back-pressure's pause of both is another thing
    expect(r.task.commandsHeld).toBe(true);
    expect(await sharePauses(r)).toBe(1);

    await until(() => r.task.uncommitted === 50 && r.calls.filter((c) => c === 'wake true').length >= 1, 'the commit');
    expect(r.calls).not.toContain('resume-commands 0'); // the unit holding them has not committed yet
    release();
    await until(() => r.calls.includes('resume-commands 0'), 'the commands partition to resume');
    expect(r.units).toEqual([{ events: 0, commands: 50 }]);
    expect(r.task.commandsHeld).toBe(false);
  });

  it('no starvation: with idle events, commands flow in back-to-back units, each at the cap, none lost or doubled', async () => {
    const r = make();
    const total = 1_000;
    // The consumer: fetches from the resolved offset + 1 whenever the partition is not paused.
    let next = 0;
    while (next < total) {
      await until(() => !r.task.commandsHeld, 'the commands partition to resume');
      const taken = await r.task.foldBatch(commands(next, Math.min(300, total - next)));
      if (taken !== undefined) next = Number(taken) + 1;
    }
    r.task.commitDue(); // the interval: the last unit (below the cap) commits too
    await until(() => r.units.reduce((n, u) => n + u.commands, 0) === total, 'every command to commit');
    expect(r.units.every((u) => u.commands <= 50)).toBe(true);
    expect(r.units.slice(0, -1).every((u) => u.commands === 50)).toBe(true); // full units, back to back
    expect(r.units).toHaveLength(total / 50);
    expect(await sharePauses(r)).toBe(total / 50);
    expect(r.task.positions().get(COMMANDS)).toBe(BigInt(total));
  });

  it('a commands batch folded alongside an events batch of the same task waits until the events are folded', async () => {
    const r = make({ commandShare: 1 });
    let commandsDuringEvents = 0;
    let foldingEvents = false;
    r.onRead.value = () => {
      if (foldingEvents && r.task.positions().get(COMMANDS)! > 0n) commandsDuringEvents++;
    };
    foldingEvents = true;
    const eventsDone = r.task.foldBatch(events(0, 2_000)).then((taken) => {
      foldingEvents = false;
      return taken;
    });
    const commandsDone = r.task.foldBatch(commands(0, 1_000));
    expect(await Promise.all([eventsDone, commandsDone])).toEqual(['1999', '999']);
    expect(commandsDuringEvents).toBe(0);
  });

  it('a commands batch already folding gives way to an events batch that arrives: its next slice waits', async () => {
    const r = make({ commandShare: 1 });
    const commandsAt: bigint[] = [];
    let foldingEvents = false;
    r.onRead.value = () => {
      if (foldingEvents) commandsAt.push(r.task.positions().get(COMMANDS)!);
    };
    const commandsDone = r.task.foldBatch(commands(0, 2_000)); // its first slice (500) folds now
    foldingEvents = true;
    const eventsDone = r.task.foldBatch(events(0, 2_000)).then((taken) => {
      foldingEvents = false;
      return taken;
    });
    expect(await Promise.all([eventsDone, commandsDone])).toEqual(['1999', '1999']);
    expect(new Set(commandsAt)).toEqual(new Set([500n])); // no command slice between the event slices
  });

  it('a fold slice ends after FOLD_SLICE_MS of fold time (the clock read every 32 records), or after 500 records', async () => {
    const slow = make({ foldSliceMs: 4, commitMaxRecords: 10_000 });
    slow.clock.costMs = 0.1; // 64 records take 6.4 ms: the clock at 32 says 3.2, at 64 it says stop
    expect(await slow.task.foldBatch(events(0, 200))).toBe('199');
    expect(slow.sliceEnds.slice(0, 3)).toEqual([64, 128, 192]);

    const fast = make({ foldSliceMs: 4, commitMaxRecords: 10_000 });
    expect(await fast.task.foldBatch(events(0, 1_200))).toBe('1199');
    expect(fast.sliceEnds.slice(0, 3)).toEqual([500, 1_000, 1_200]);
  });

  it('commands stop at the share of fold time too: share x COMMIT_INTERVAL_MS per unit', async () => {
    const r = make({ commitMaxRecords: 10_000 }); // 5,000 records: the time (50 ms) binds first
    r.clock.costMs = 1;
    const taken = await r.task.foldBatch(commands(0, 1_000));
    // Slices of 32 (4 ms, read every 32 records) until 50 ms: 64 records; a slice never outruns its budget by more than 32.
    expect(taken).toBe('63');
    expect(r.calls).toContain('pause-commands 0');
  });
});
