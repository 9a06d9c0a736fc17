import type { KafkaMessage } from 'kafkajs';
import { AS_OF } from '../common';
import {
  accountsOracle,
  commandIdFor,
  DORMANCY_SWEEP,
  encodeCommand,
  encodeEvent,
  evaluateCondition,
  generateAccountEvents,
  type JsonObject,
  type UpdateCommand,
} from '../lib';
import { steadyEvent } from '../steady-load';

/** The bench's inputs without a broker: the seeded accounts, the steady load's events, the sweep's commands. */
export interface ReplayInputs {
  /** Key -> value of every seeded account (version 1), in key order. */
  accounts: Map<string, JsonObject>;
  /** Events-topic records: the steady load's sequence (sweeps.ts, loadSpec seed 11). */
  events: KafkaMessage[];
  /** Commands-topic records: the dormancy sweep's commands, in key order as the scanner walks. */
  commands: KafkaMessage[];
  /** Of `commands`, those for accounts the sweep's condition matched when the inputs were made. */
  eligible: number;
}

/**
 * The accounts as part 2 of the bench seeds them (sweeps.ts: eventsPerAccount 2, seed 7,
 * dormantFraction 0.3), `events` steady-load events, and `commands` commands of one dormancy
 * sweep: one per matching account in key order, as the scanner's walk emits them
 * (scan-plan.ts buildCommand: no expectedVersion); past the matches, the walk's next keys (they
 * answer condition_false, like a key an event made ineligible after the replica read it).
 */
export function replayInputs(keys: number, events: number, commands: number): ReplayInputs {
  const accounts = accountsOracle(
    generateAccountEvents({ accounts: keys, eventsPerAccount: 2, seed: 7, now: AS_OF, dormantFraction: 0.3 }),
  );
  const sorted = new Map([...accounts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const loadSpec = { seed: 11, keys, asOf: AS_OF };
  const eventRecords = Array.from({ length: events }, (_, i) => {
    const { key, event } = steadyEvent(loadSpec, i);
    return message(i, Buffer.from(key), encodeEvent(event));
  });
  const scanId = 'replay-dormancy';
  const matching: string[] = [];
  const others: string[] = [];
  for (const [key, value] of sorted) {
    if (evaluateCondition(DORMANCY_SWEEP.condition, value, { asOf: AS_OF })) matching.push(key);
    else others.push(key);
  }
  const chosen = [...matching.slice(0, commands), ...others.slice(0, Math.max(0, commands - matching.length))];
  const commandRecords = chosen.map((key, i) => {
    const command: UpdateCommand = {
      commandId: commandIdFor(scanId, key),
      scanId,
      key,
      asOf: AS_OF,
      condition: DORMANCY_SWEEP.condition,
      action: DORMANCY_SWEEP.action,
      issuedAt: AS_OF,
    };
    return message(i, Buffer.from(key), encodeCommand(command));
  });
  return {
    accounts: sorted,
    events: eventRecords,
    commands: commandRecords,
    eligible: Math.min(matching.length, commands),
  };
}

function message(offset: number, key: Buffer, value: Buffer): KafkaMessage {
  return {
    key,
    value,
    offset: String(offset),
    timestamp: String(AS_OF),
    attributes: 0,
    headers: {},
  };
}
