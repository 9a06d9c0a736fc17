// The processor's fold path without Kafka: the bench's inputs (200,000 accounts, the steady load's
// events, one dormancy sweep's commands) through the real fold (foldRecord into a UnitOfWork, in
// slices like Task.foldSlice) and the real store commit of each unit's changes.
//   pnpm bench:replay [--keys 200000] [--events 25000] [--commands 50000] [--slice 500] [--unit 2000]
//                     [--warm 5] [--cpu-prof [dir]]
// Rounds, each on a fresh copy of the seeded store: one cold, --warm timed ones (the median of
// their CPU time is the total: on a shared machine wall time and single rounds are noisy) and one profiled (the stage split, scaled to
// the warm median). Prints µs per record per stage; --cpu-prof keeps the profiled round's
// profiles in dir/<topic>/ and prints their top self-time functions.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { KafkaMessage } from 'kafkajs';
import {
  accountsDomain,
  currentEntity,
  DEAD_LETTER_MAX_BYTES,
  DEFAULT_ENTITY_MAX_BYTES,
  foldRecord,
  TaskStore,
  unitChanges,
  UnitOfWork,
  type FoldContext,
} from '../lib';
import { summarizeProfile } from '../profile';
import { encodeFreshEntity } from '../stored-entity';
import { replayInputs } from './inputs';
import { STAGES, stageTimes, type CpuProfile, type Stage } from './stages';

interface Options {
  keys: number;
  events: number;
  commands: number;
  slice: number;
  unit: number;
  warm: number;
  cpuProf?: string;
}

const EVENTS = 'events';
const COMMANDS = 'commands';

function parseArgs(argv: string[]): Options {
  const o: Options = { keys: 200_000, events: 25_000, commands: 50_000, slice: 500, unit: 2_000, warm: 5 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = () => {
      const v = Number(argv[++i]);
      if (!Number.isSafeInteger(v) || v < 1) throw new Error(`${arg} takes a positive integer`);
      return v;
    };
    if (arg === '--keys') o.keys = next();
    else if (arg === '--events') o.events = next();
    else if (arg === '--commands') o.commands = next();
    else if (arg === '--slice') o.slice = next();
    else if (arg === '--unit') o.unit = next();
    else if (arg === '--warm') o.warm = next();
    else if (arg === '--cpu-prof') {
      const dir = argv[i + 1];
      o.cpuProf = dir && !dir.startsWith('--') ? (i++, dir) : join(process.cwd(), 'replay-profile');
    } else throw new Error(`unknown option ${arg}`);
  }
  return o;
}

/** One task's partition, folded and committed as the task does it (no Kafka: the results are dropped). */
class Replay {
  private unit = new UnitOfWork();
  private changelogOffset = 0n;
  private readonly fold: FoldContext;
  units = 0;

  constructor(
    private readonly store: TaskStore,
    private readonly unitRecords: number,
  ) {
    this.fold = {
      domain: accountsDomain,
      commandsTopic: COMMANDS,
      current: (key) => currentEntity(key, this.unit, undefined, (k) => this.store.get(k)),
      now: Date.now,
      entityMaxBytes: DEFAULT_ENTITY_MAX_BYTES,
      deadLetterMaxBytes: DEAD_LETTER_MAX_BYTES,
    };
  }

  /** Like Task.foldFrom: the batch in slices; a unit is committed once it holds unitRecords. */
  run(topic: string, messages: readonly KafkaMessage[], slice: number): void {
    for (let i = 0; i < messages.length; i += slice) {
      // Task.foldFrom: each slice's reads in one SQLite read transaction.
      this.store.reading(() => this.replayFoldSlice(topic, messages, i, Math.min(i + slice, messages.length)));
      if (this.unit.records >= this.unitRecords) this.replayCommit();
    }
    if (this.unit.records > 0) this.replayCommit();
  }

  /** Task.foldSlice's loop. */
  private replayFoldSlice(topic: string, messages: readonly KafkaMessage[], start: number, end: number): void {
    const unit = this.unit;
    for (let i = start; i < end; i++) foldRecord(unit, { topic, partition: 0, message: messages[i]! }, this.fold);
    unit.records += end - start;
  }

  /** What Task.commit does with a unit besides Kafka: its changes as the changelog gets them, then SQLite. */
  private replayCommit(): void {
    const unit = this.unit;
    this.unit = new UnitOfWork();
    const changes = unitChanges(unit);
    this.changelogOffset += BigInt(changes.length);
    if (changes.length > 0) this.store.commit(changes, String(this.changelogOffset), Date.now(), new Map());
    this.units++;
  }
}

interface PhaseResult {
  records: number;
  /** CPU time of the process (user + system): on a loaded machine, wall time mostly measures the others. */
  ms: number;
  wallMs: number;
  profile?: CpuProfile;
}

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result as T))),
  );
}

async function runRound(
  template: string,
  dir: string,
  round: number,
  o: Options,
  inputs: ReturnType<typeof replayInputs>,
  session?: Session,
): Promise<Map<string, PhaseResult>> {
  const roundDir = join(dir, `round-${round}`);
  mkdirSync(roundDir, { recursive: true });
  copyFileSync(template, join(roundDir, 'task-0.sqlite'));
  const store = TaskStore.open({ dir: roundDir, task: 0 });
  const out = new Map<string, PhaseResult>();
  try {
    const replay = new Replay(store, o.unit);
    for (const [topic, messages] of [
      [EVENTS, inputs.events],
      [COMMANDS, inputs.commands],
    ] as const) {
      if (session) await post(session, 'Profiler.start');
      const startedAt = performance.now();
      const cpu = process.cpuUsage();
      replay.run(topic, messages, o.slice);
      const { user, system } = process.cpuUsage(cpu);
      const ms = (user + system) / 1000;
      const wallMs = performance.now() - startedAt;
      const profile = session ? (await post<{ profile: CpuProfile }>(session, 'Profiler.stop')).profile : undefined;
      out.set(topic, { records: messages.length, ms, wallMs, ...(profile ? { profile } : {}) });
    }
  } finally {
    store.close();
    rmSync(roundDir, { recursive: true, force: true });
  }
  return out;
}

const us = (n: number) => n.toFixed(2);

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'replay-'));
  try {
    console.log(
      `replay: ${o.keys} accounts, ${o.events} events, ${o.commands} commands, slices of ${o.slice}, units of ${o.unit} records; node ${process.version}`,
    );
    const inputs = replayInputs(o.keys, o.events, o.commands);
    console.log(`commands: ${inputs.eligible} for accounts the sweep's condition matched`);
    const seed = TaskStore.open({ dir, task: 0 });
    seed.commit(
      [...inputs.accounts].map(([key, value]) => [key, encodeFreshEntity(1, value)]),
      String(inputs.accounts.size),
    );
    seed.close();
    const template = join(dir, 'task-0.sqlite');

    const cold = await runRound(template, dir, 1, o, inputs);
    const warm: Array<Map<string, PhaseResult>> = [];
    for (let round = 0; round < o.warm; round++) warm.push(await runRound(template, dir, 2 + round, o, inputs));
    const session = new Session();
    session.connect();
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.setSamplingInterval', { interval: 100 });
    const profiled = await runRound(template, dir, 2 + o.warm, o, inputs, session);
    session.disconnect();

    for (const topic of [EVENTS, COMMANDS]) {
      const c = cold.get(topic)!;
      const p = profiled.get(topic)!;
      const perRecord = (r: PhaseResult) => (r.ms * 1000) / r.records;
      const rounds = warm.map((w) => perRecord(w.get(topic)!)).sort((a, b) => a - b);
      const walls = warm
        .map((w) => w.get(topic)!)
        .map((r) => (r.wallMs * 1000) / r.records)
        .sort((a, b) => a - b);
      const warmUs = rounds[Math.floor(rounds.length / 2)]!;
      const times = stageTimes(p.profile!);
      const sampled = STAGES.reduce((sum, s) => sum + times[s], 0);
      console.log(`\n${topic}: ${p.records} records`);
      console.log(
        `  total CPU µs per record: warm median ${us(warmUs)} (best ${us(rounds[0]!)}, rounds ${rounds.map(us).join(' ')}), ` +
          `cold ${us(perRecord(c))}, profiled ${us(perRecord(p))}; wall µs warm median ${us(walls[Math.floor(walls.length / 2)]!)}`,
      );
      console.log(
        `  one thread at saturation: ${Math.round(1e6 / warmUs).toLocaleString('en-US')} records/s (warm median)`,
      );
      console.log("  µs per record per stage (the profiled round's shares of the warm total):");
      for (const stage of STAGES) {
        const share = sampled > 0 ? times[stage] / sampled : 0;
        console.log(`    ${stage.padEnd(9)} ${us(share * warmUs).padStart(7)}  (${(100 * share).toFixed(1)} %)`);
      }
      if (o.cpuProf) {
        const profDir = join(o.cpuProf, topic);
        mkdirSync(profDir, { recursive: true });
        const file = join(profDir, `replay-${topic}.cpuprofile`);
        writeFileSync(file, JSON.stringify(p.profile));
        const summary = summarizeProfile(profDir);
        console.log(`  top self time (${file}):`);
        for (const { fn, percent } of summary?.topFunctions.slice(0, 10) ?? []) {
          console.log(`    ${percent.toFixed(1).padStart(5)} %  ${fn}`);
        }
      }
    }
    console.log(`\nstage shares: ${describeStages()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function describeStages(): string {
  const what: Record<Stage, string> = {
    decode: 'decodeCommand/decodeEvent',
    validate: "the command's condition and action checked",
    fold: 'the rest of the fold slice (aggregate, results, unit)',
    read: 'TaskStore reads',
    encode: 'encodeStoredEntity',
    write: 'TaskStore.commit',
    commit: "the rest of a unit's commit",
    gc: 'garbage collection',
  };
  return STAGES.map((s) => `${s} = ${what[s]}`).join('; ');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
