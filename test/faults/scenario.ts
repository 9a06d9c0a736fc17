import { DORMANCY_SWEEP } from '@state-relay/accounts';
import {
  commandIdFor,
  decodeCommandResult,
  seenOf,
  type CommandResult,
  type StoredEntity,
} from '@state-relay/contracts';
import { evaluateCondition } from '@state-relay/rules';
import { kafkaClient, readTopic, waitUntil } from '@state-relay/testkit';
import type { Kafka } from 'kafkajs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { changelogState, waitCaughtUp } from '../../services/processor/test/harness';
import {
  AS_OF,
  foldWithVersions,
  inputLog,
  prng,
  produceAll,
  seedAccounts,
  SteadyLoad,
  type Seeded,
  type Versioned,
} from './load';
import type { PoisonExpectations } from './poison';
import { ScannerApi, type ScanView } from './scanner-api';
import { API_TOKEN, newDeployment, type Deployment, type FaultStack, type ServiceNode } from './stack';

// One fault scenario: a deployment (processor + scanner containers, fresh topics), seeded
// accounts, a steady event load, a rate-limited dormancy sweep — and the faults the scenario
// injects while both run. Afterwards the final state must equal the oracle: every event in
// the log folded in order, and every account that matched the sweep marked dormant exactly once.

export interface ScenarioOptions {
  seed: number;
  /** Accounts seeded before the scan (30% of them match the sweep). */
  accounts?: number;
  /** The scan's command rate: slow enough that it spans the faults. */
  rate?: number;
  /** Steady load, events per second. */
  loadPerSecond?: number;
  /** How long the scan may take to complete after the last fault (default 150 s). */
  completeWithinMs?: number;
  faults(ctx: ScenarioContext): Promise<void>;
}

export interface ScenarioContext {
  stack: FaultStack;
  d: Deployment;
  kafka: Kafka;
  /** Running processor instances; a fault that replaces or adds one updates this list. */
  processors: ServiceNode[];
  scanner: ServiceNode;
  api: ScannerApi;
  scanId: string;
  seeded: Seeded;
  random: () => number;
  /** Resolves once the scan has emitted at least `fraction` of its matches. */
  emitted(fraction: number): Promise<ScanView>;
  note(what: string): void;
  /** The steady load, once started. */
  load?: SteadyLoad;
  /** Set by the poison-record fault: the results its own commands must have. */
  poison?: PoisonExpectations;
}

export interface ScenarioReport {
  seed: number;
  scan: ScanView;
  events: number;
  matched: number;
  duplicateResults: number;
  loadFailedSends: number;
  timeline: string[];
  ms: number;
}

export interface DeployOptions {
  seed: number;
  /** Accounts seeded before the scan (30% of them match the sweep). */
  accounts: number;
  note(what: string): void;
}

/**
 * A deployment on the stack: fresh topics, one processor and the scanner, the seeded accounts
 * processed. The context it returns has no scan and no load yet.
 */
export async function deploy(stack: FaultStack, options: DeployOptions): Promise<ScenarioContext> {
  const { note } = options;
  const d = newDeployment(4);
  const kafka = kafkaClient(stack.brokers, d.appId);
  const processors = [await stack.startProcessor(d, { name: 'processor-1' })];
  const scanner = await stack.startScanner(d);
  note('stack up');

  const seeded = seedAccounts(options.accounts, 3, options.seed);
  await produceAll(kafka, d.eventsTopic, seeded.events);
  await waitCaughtUp(kafka, d.appId, d.eventsTopic);
  note(`seeded ${seeded.events.length} events, ${seeded.matching.length} accounts to sweep`);

  const ctx: ScenarioContext = {
    stack,
    d,
    kafka,
    processors,
    scanner,
    api: new ScannerApi(() => ctx.scanner.url),
    scanId: '',
    seeded,
    random: prng(options.seed ^ 0x5eed),
    // Emission reached the fraction, or the scan is already past its walk.
    emitted: (fraction) =>
      ctx.api.waitFor(
        ctx.scanId,
        (s) => s.counts.emitted >= Math.ceil(seeded.matching.length * fraction) || s.status === 'completed',
        `${Math.round(fraction * 100)}% of the commands emitted`,
      ),
    note,
  };
  return ctx;
}

export async function runScenario(stack: FaultStack, options: ScenarioOptions): Promise<ScenarioReport> {
  const started = Date.now();
  const timeline: string[] = [];
  const note = (what: string) => timeline.push(`${((Date.now() - started) / 1000).toFixed(1)}s ${what}`);
  const ctx = await deploy(stack, { seed: options.seed, accounts: options.accounts ?? 1_000, note });
  const { d, kafka, seeded } = ctx;
  const load = new SteadyLoad(kafka, d.eventsTopic, seeded.others, {
    seed: options.seed,
    perSecond: options.loadPerSecond ?? 60,
  });
  ctx.load = load;
  await load.start();
  try {
    try {
      // On a starved machine the answer can take past the client's 15 s bound after the scan was
      // queued; asOf (one scan per deployment) finds it instead of failing the run.
      const scan = await ctx.api.createDuringFaults({
        ...DORMANCY_SWEEP,
        asOf: AS_OF,
        options: { rate: options.rate ?? 25, batchSize: 100 },
      });
      ctx.scanId = scan.id;
      note(`scan ${scan.id} created`);
      await options.faults(ctx);
      note('faults done');
      // A healthy recovery completes the scan within a minute of the last fault.
      const done = await ctx.api.waitFor(
        scan.id,
        (s) => s.status === 'completed',
        'the scan to complete',
        options.completeWithinMs ?? 150_000,
      );
      note(`scan completed: ${JSON.stringify(done.counts)}`);
    } finally {
      await load.stop();
    }
    note(`load stopped after ${load.produced} events (${load.failedSends} failed sends)`);

    await waitCaughtUp(kafka, d.appId, d.eventsTopic, 120_000);
    await waitCaughtUp(kafka, d.appId, d.commandsTopic, 120_000);
    note('processor caught up');
    const report = await verify(ctx, load);
    note('verified');
    return { ...report, seed: options.seed, loadFailedSends: load.failedSends, timeline, ms: Date.now() - started };
  } catch (err) {
    if (err instanceof Error)
      err.message = `${err.message}\n${await diagnose(ctx, timeline).catch((e: Error) => `(no diagnosis: ${e.message})`)}`;
    throw err;
  }
}

/** What a failed scenario leaves to read: its timeline, the processor group's position, the services' warnings. */
async function diagnose(ctx: ScenarioContext, timeline: string[]): Promise<string> {
  const { d, kafka } = ctx;
  const out = ['timeline:', ...timeline.map((t) => `  ${t}`)];
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (const topic of [d.eventsTopic, d.commandsTopic]) {
      const ends = await admin.fetchTopicOffsets(topic);
      const [committed] = await admin.fetchOffsets({ groupId: d.appId, topics: [topic] });
      const at = new Map(committed!.partitions.map((p) => [p.partition, p.offset]));
      out.push(
        `${topic}: ${ends.map((e) => `p${e.partition} ${at.get(e.partition)}/${e.high}`).join(', ')} (committed/end)`,
      );
    }
    const results = await admin.fetchTopicOffsets(d.resultsTopic);
    out.push(`${d.resultsTopic}: ends ${results.map((e) => e.high).join(', ')}`);
  } finally {
    await admin.disconnect();
  }
  const dir = path.join(__dirname, '..', '..', '.state-relay', 'fault-logs', d.appId);
  await mkdir(dir, { recursive: true });
  for (const node of [...ctx.processors, ctx.scanner]) {
    const all = await node.logs().catch(() => '');
    await writeFile(path.join(dir, `${node.name}.log`), all);
    const lines = all.split('\n');
    const bad = lines.filter((l) => /"level":(40|50|60)/.test(l));
    // The service's own lines say what it decided; kafkajs's connection noise only says the broker was away.
    const own = lines.filter((l) => l.startsWith('{') && !l.includes('"component":"kafkajs"'));
    out.push(
      `${node.name}: ${bad.length} warnings or errors; its own last lines:`,
      ...own.slice(-15).map((l) => `  ${l.slice(0, 600)}`),
    );
  }
  out.push(`full logs: ${dir}`);
  return out.join('\n');
}

/** Every claim of the scenario, checked against Kafka (the source of truth) and both HTTP APIs. */
async function verify(
  ctx: ScenarioContext,
  load: SteadyLoad,
): Promise<Pick<ScenarioReport, 'scan' | 'events' | 'matched' | 'duplicateResults'>> {
  const { d, kafka, seeded, scanId, api } = ctx;

  // The oracle: every event in the log, folded in the order the processor saw it.
  const { events, refused } = await inputLog(kafka, d.eventsTopic);
  const ids = new Set(events.map((e) => e.event.id));
  const lost = load.acknowledgedIds.filter((id) => !ids.has(id));
  expect({ acknowledgedButNotInLog: lost.slice(0, 5) }).toEqual({ acknowledgedButNotInLog: [] });
  const oracle = foldWithVersions(events);
  const stillMatching = [...oracle]
    .filter(([, v]) => evaluateCondition(DORMANCY_SWEEP.condition, v.value, { asOf: AS_OF }))
    .map(([k]) => k);
  expect(stillMatching.sort()).toEqual(seeded.matching); // the load never touched a swept account
  const matched = new Set(seeded.matching);
  const expected = expectedState(oracle, matched);

  // The changelog (read_committed): exactly the oracle, each sweep command applied once.
  // Two interrupted-rebuild faults leave over 300,000 records to read, beside two other deployments.
  const state = await changelogState(kafka, d.changelogTopic, 300_000);
  const missing = [...expected.keys()].filter((k) => !state.has(k));
  const extra = [...state.keys()].filter((k) => !expected.has(k));
  expect({ missing: missing.slice(0, 5), extra: extra.slice(0, 5) }).toEqual({ missing: [], extra: [] });
  const wrong: Array<{ key: string; expected: Versioned; actual: StoredEntity }> = [];
  for (const [key, want] of expected) {
    const got = state.get(key)!;
    if (got.version !== want.version || !equalJson(got.value, want.value))
      wrong.push({ key, expected: want, actual: got });
    const seen = matched.has(key) ? seenOf([commandIdFor(scanId, key)]) : '';
    if (got.seen !== seen) wrong.push({ key, expected: { ...want, seen } as never, actual: got });
  }
  expect({ wrongEntities: wrong.length, first: wrong.slice(0, 3) }).toEqual({ wrongEntities: 0, first: [] });

  // Results: every emitted command has exactly one first result, `applied` at the next version;
  // any re-delivery answered `duplicate`; nothing else.
  const results = (await readTopic(kafka, d.resultsTopic, { isolation: 'read_committed', timeoutMs: 60_000 }))
    .sort((a, b) => a.partition - b.partition || (BigInt(a.offset) < BigInt(b.offset) ? -1 : 1))
    .map((r) => decodeCommandResult(Buffer.from(r.key!), Buffer.from(r.value!)));
  const byCommand = new Map<string, CommandResult[]>();
  for (const r of results) byCommand.set(r.commandId, [...(byCommand.get(r.commandId) ?? []), r]);
  const problems: string[] = [];
  for (const key of seeded.matching) {
    const id = commandIdFor(scanId, key);
    const got = byCommand.get(id) ?? [];
    byCommand.delete(id);
    const first = got.filter((r) => r.outcome !== 'duplicate');
    if (
      first.length !== 1 ||
      first[0]!.outcome !== 'applied' ||
      got[0]!.outcome !== 'applied' ||
      first[0]!.version !== expected.get(key)!.version
    ) {
      problems.push(`${key}: ${JSON.stringify(got.map((r) => [r.outcome, r.version]))}`);
    }
  }
  for (const [id, want] of ctx.poison?.commands ?? []) {
    const got = byCommand.get(id) ?? [];
    byCommand.delete(id);
    const first = got.filter((r) => r.outcome !== 'duplicate');
    if (first.length !== 1 || got[0]!.outcome !== want.outcome || got[0]!.key !== want.key)
      problems.push(`poison command on ${want.key}: ${JSON.stringify(got.map((r) => [r.outcome, r.reason]))}`);
  }
  for (const [id, rs] of byCommand)
    problems.push(`unexpected command ${id}: ${JSON.stringify(rs.map((r) => [r.key, r.outcome]))}`);
  expect({ resultProblems: problems.length, first: problems.slice(0, 5) }).toEqual({ resultProblems: 0, first: [] });
  const duplicateResults = results.filter((r) => r.outcome === 'duplicate').length;

  // Exactly the events the processor must refuse were dead-lettered (none, unless a poison fault
  // wrote one), each once: a dead letter that does not fit its topic would stop its partition.
  const deadLetters = await readTopic(kafka, d.deadLetterTopic, { isolation: 'read_committed', timeoutMs: 30_000 });
  expect({ deadLetters: deadLetters.length }).toEqual({ deadLetters: refused });

  // The scan's own account of it.
  const scan = await waitUntil(() => api.get(scanId), { timeoutMs: 60_000, intervalMs: 1_000, message: 'the scan' });
  expect({
    status: scan.status,
    pending: scan.counts.pending,
    applied: scan.counts.results.applied,
    matched: scan.counts.matched,
  }).toEqual({
    status: 'completed',
    pending: 0,
    applied: seeded.matching.length,
    matched: seeded.matching.length,
  });
  expect(scan.counts.emitted).toBeGreaterThanOrEqual(seeded.matching.length);

  // GET /state/:key of the running instance(s) agrees, for a sample of swept and other keys.
  const random = prng(ctx.seeded.events.length);
  const keys = [...expected.keys()];
  const sample = [
    ...seeded.matching.slice(0, 10),
    ...Array.from({ length: 30 }, () => keys[Math.floor(random() * keys.length)]!),
  ];
  for (const key of sample) {
    const found = await readState(ctx.processors, key);
    expect([key, found]).toEqual([key, { version: expected.get(key)!.version, value: expected.get(key)!.value }]);
  }

  // The token never reached a log line.
  for (const node of [...ctx.processors, ctx.scanner]) {
    const logs = await node.logs();
    expect({ node: node.name, tokenInLogs: logs.includes(API_TOKEN) }).toEqual({ node: node.name, tokenInLogs: false });
  }
  return { scan, events: events.length, matched: seeded.matching.length, duplicateResults };
}

/** The oracle after the sweep: every swept account dormant, one version later. */
export function expectedState(oracle: Map<string, Versioned>, swept: ReadonlySet<string>): Map<string, Versioned> {
  const expected = new Map<string, Versioned>();
  for (const [key, v] of oracle) {
    expected.set(key, swept.has(key) ? { version: v.version + 1, value: { ...v.value, status: 'dormant' } } : v);
  }
  return expected;
}

async function readState(
  processors: ServiceNode[],
  key: string,
): Promise<{ version: number; value: unknown } | undefined> {
  return waitUntil(
    async () => {
      for (const p of processors) {
        const res = await fetch(`${p.url}/state/${encodeURIComponent(key)}`, {
          headers: { authorization: `Bearer ${API_TOKEN}` },
        }).catch(() => undefined);
        if (res?.status === 200) {
          const body = (await res.json()) as { version: number; value: unknown };
          return { version: body.version, value: body.value };
        }
      }
      return undefined;
    },
    { timeoutMs: 10_000, message: `GET /state/${key} from a running processor` },
  );
}

function equalJson(a: unknown, b: unknown): boolean {
  try {
    expect(a).toEqual(b);
    return true;
  } catch {
    return false;
  }
}
