import { commandIdFor, decodeCommandResult, encodeCommand, type UpdateCommand } from '@state-relay/contracts';
import { readTopic, waitUntil } from '@state-relay/testkit';
import { AS_OF } from './load';
import type { ScenarioContext } from './scenario';

// Poison records: input the processor must answer without stopping the partition it lands on.
// Each is as large as its topic accepts, so that what the processor makes of it (a dead letter
// carrying the record, an entity carrying the value) cannot fit a record as it is.

/** The scan id of the commands this fault writes itself: no scan of the scanner has it. */
export const POISON_SCAN = 'poison-fault';

/** What a poison fault leaves for the verification: the command results it must find. */
export interface PoisonExpectations {
  /** commandId -> key and the one first outcome it must have. */
  commands: Map<string, { key: string; outcome: 'invalid' }>;
}

export function poisonExpectations(ctx: ScenarioContext): PoisonExpectations {
  ctx.poison ??= { commands: new Map() };
  return ctx.poison;
}

/**
 * Writes, straight to the input topics, (1) an event the processor must dead-letter whose value
 * is as large as the events topic takes, and (2) a command on a live account whose `set` would
 * grow it past what its changelog record may hold, which must be answered `invalid`. Then waits
 * until the command has its result and every task is still owned by a ready instance.
 */
export async function poisonRecords(ctx: ScenarioContext): Promise<void> {
  const { d, kafka } = ctx;
  const limits = await maxMessageBytes(ctx, [d.eventsTopic, d.commandsTopic]);
  const n = poisonExpectations(ctx).commands.size;
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    // An unknown event type: decodable, refused by the domain's validation, dead-lettered whole.
    const filler = 'p'.repeat(limits.get(d.eventsTopic)! - 1_024);
    const event = { id: `poison-event-${n}`, type: 'poisoned', at: AS_OF, data: { filler } };
    await producer.send({
      topic: d.eventsTopic,
      acks: -1,
      messages: [{ key: `poison-${n}`, value: JSON.stringify(event) }],
    });
    const key = ctx.seeded.others[Math.floor(ctx.random() * ctx.seeded.others.length)]!;
    const scanId = `${POISON_SCAN}-${n}`;
    const command: UpdateCommand = {
      commandId: commandIdFor(scanId, key),
      scanId,
      key,
      asOf: AS_OF,
      condition: { field: 'status', op: 'exists' },
      action: { set: { note: 'q'.repeat(limits.get(d.commandsTopic)! - 2_048) } },
      issuedAt: Date.now(),
    };
    poisonExpectations(ctx).commands.set(command.commandId, { key, outcome: 'invalid' });
    await producer.send({ topic: d.commandsTopic, acks: -1, messages: [{ key, value: encodeCommand(command) }] });
    ctx.note(
      `poison: an invalid event of ${filler.length} B, and a command setting ${limits.get(d.commandsTopic)! - 2_048} B on ${key}`,
    );
    // Each look reads the whole results topic: a soak's holds every sweep's results (over 100,000
    // after 20 minutes), more than a busy machine reads in 5 s, so one look may take up to a minute.
    await waitUntil(
      async () => {
        const results = await readTopic(kafka, d.resultsTopic, { isolation: 'read_committed', timeoutMs: 60_000 });
        return results.some(
          (r) => decodeCommandResult(Buffer.from(r.key!), Buffer.from(r.value!)).commandId === command.commandId,
        );
      },
      { timeoutMs: 180_000, intervalMs: 2_000, message: `the poison command on ${key} to get its result` },
    );
    ctx.note('poison: the command has its result');
  } finally {
    await producer.disconnect();
  }
}

/** Each topic's max.message.bytes as the broker reports it. */
async function maxMessageBytes(ctx: ScenarioContext, topics: string[]): Promise<Map<string, number>> {
  const admin = ctx.kafka.admin();
  await admin.connect();
  try {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: topics.map((name) => ({ type: 2 /* TOPIC */, name, configNames: ['max.message.bytes'] })),
    });
    return new Map(
      resources.map((r) => [
        r.resourceName,
        Number(r.configEntries.find((e) => e.configName === 'max.message.bytes')!.configValue),
      ]),
    );
  } finally {
    await admin.disconnect();
  }
}
