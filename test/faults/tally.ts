import { commandIdFor, decodeCommandResult } from '@state-relay/contracts';
import { readTopic } from '@state-relay/testkit';
import { changelogState } from '../../services/processor/test/harness';
import { eventsInLog, foldWithVersions } from './load';
import type { ScenarioContext } from './scenario';

// The campaign's figures of one run, counted from Kafka after it ended (passed or not). The
// scenario's own checks say pass or fail; these say how much went wrong, by kind:
// - lost: an acknowledged event missing from the events log; or, once the processor group has
//   consumed both inputs to their ends, an entity whose changelog version is below the oracle's
//   (the oracle counts a swept account's command only if the command has a result);
// - doubled: an entity whose version is above the oracle's with its command applied once, or
//   a command with more than one first (non-`duplicate`) result;
// - stuck: input records the processor group never committed, and swept accounts whose command
//   has no result at all.

export interface Tally {
  /** Records on the events topic. */
  events: number;
  /** Records on the commands topic (re-emissions after a scanner restart included). */
  commands: number;
  lost: number;
  doubled: number;
  stuck: number;
}

export async function tally(ctx: ScenarioContext): Promise<Tally> {
  const { d, kafka, seeded, scanId } = ctx;
  const events = await eventsInLog(kafka, d.eventsTopic);
  const inLog = new Set(events.map((e) => e.event.id));
  const lostEvents = (ctx.load?.acknowledgedIds ?? []).filter((id) => !inLog.has(id)).length;

  const firstResults = new Map<string, number>();
  const results = await readTopic(kafka, d.resultsTopic, { isolation: 'read_committed', timeoutMs: 60_000 });
  for (const r of results) {
    const result = decodeCommandResult(Buffer.from(r.key!), Buffer.from(r.value!));
    if (result.outcome !== 'duplicate')
      firstResults.set(result.commandId, (firstResults.get(result.commandId) ?? 0) + 1);
  }
  const swept = new Set(seeded.matching);
  const answered = (key: string) => (firstResults.get(commandIdFor(scanId, key)) ?? 0) > 0;

  const lag = await uncommitted(ctx);
  const state = await changelogState(kafka, d.changelogTopic);
  let behind = 0;
  let ahead = 0;
  for (const [key, { version }] of foldWithVersions(events)) {
    const actual = state.get(key)?.version ?? 0;
    if (actual > version + (swept.has(key) ? 1 : 0)) ahead++;
    else if (actual < version + (swept.has(key) && answered(key) ? 1 : 0)) behind++;
  }
  const doubledResults = [...firstResults.values()].filter((n) => n > 1).length;
  const unanswered = seeded.matching.filter((key) => !answered(key)).length;
  return {
    events: events.length,
    commands: await topicSize(ctx, d.commandsTopic),
    lost: lostEvents + (lag === 0 ? behind : 0),
    doubled: ahead + doubledResults,
    stuck: lag + unanswered,
  };
}

/** Records of both inputs past the processor group's committed offsets. */
async function uncommitted(ctx: ScenarioContext): Promise<number> {
  const admin = ctx.kafka.admin();
  await admin.connect();
  try {
    let lag = 0;
    for (const topic of [ctx.d.eventsTopic, ctx.d.commandsTopic]) {
      const ends = await admin.fetchTopicOffsets(topic);
      const [committed] = await admin.fetchOffsets({ groupId: ctx.d.appId, topics: [topic] });
      const at = new Map(committed!.partitions.map((p) => [p.partition, Math.max(0, Number(p.offset))]));
      for (const e of ends) lag += Math.max(0, Number(e.high) - (at.get(e.partition) ?? 0));
    }
    return lag;
  } finally {
    await admin.disconnect();
  }
}

async function topicSize(ctx: ScenarioContext, topic: string): Promise<number> {
  const admin = ctx.kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}
