// Scan planning: pure functions from a request and replica rows to commands. No I/O, no clock
// (times come in as arguments), so every rule here is unit-tested without Kafka or SQLite.
import {
  commandIdFor,
  encodeCommand,
  MAX_ID_LENGTH,
  MAX_KEY_BYTES,
  parseIsoInstant,
  type UpdateCommand,
} from '@state-relay/contracts';
import { DEFAULT_MAX_MESSAGE_BYTES, RECORD_OVERHEAD_BYTES } from '@state-relay/kafka-runtime';
import {
  compileConditionToSql,
  durationProblem,
  evaluateCondition,
  parseDurationMs,
  validateAction,
  validateCondition,
  type Action,
  type Condition,
  type JsonObject,
} from '@state-relay/rules';
import type { FilterParam, ReplicaRow } from '@state-relay/store';
import { InvalidRequestError, type FieldIssue } from '../errors';
import { latencyBudgetIssue } from './latency-budget';
import type { ScanOptions, ScanSpec } from './scan';

/** A create-scan body after schema validation: shapes are checked, the rule language is not yet. */
export interface ScanRequest {
  condition: unknown;
  action: unknown;
  options?: ScanOptions;
  asOf?: string | number;
}

/** Epoch ms an asOf may be: 1970-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, so every view renders it. */
export const AS_OF_RANGE = { min: 0, max: 253_402_300_799_999 } as const;

export interface PlannedScan {
  spec: ScanSpec;
  asOf: number;
}

/**
 * Checks the rule language and resolves `asOf` once, so the scanner and the processor judge the
 * same condition. Throws InvalidRequestError naming every offending field under /body.
 */
export function planScan(request: ScanRequest, now: number, knownDomainActions: string[]): PlannedScan {
  const issues: FieldIssue[] = [
    ...validateCondition(request.condition, '/body/condition'),
    ...validateAction(request.action, '/body/action', knownDomainActions),
    ...optionIssues(request.options, '/body'),
  ];
  const asOf = resolveAsOf(request.asOf, now, issues);
  const options = { ...(request.options ?? {}) };
  if (issues.length === 0) issues.push(...commandFitIssues(request.condition, request.action, options, '/body'));
  if (issues.length > 0) throw new InvalidRequestError(issues);
  return { spec: { condition: request.condition as Condition, action: request.action as Action, options }, asOf };
}

/** What the options' schema cannot say: a latencyBudget sets exactly one of its properties; a maxDuration is a duration in range. */
export function optionIssues(options: ScanOptions | undefined, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const message = latencyBudgetIssue(options?.latencyBudget);
  if (message !== undefined) issues.push({ path: `${at}/options/latencyBudget`, message });
  const duration = maxDurationIssue(options?.maxDuration);
  if (duration !== undefined) issues.push({ path: `${at}/options/maxDuration`, message: duration });
  return issues;
}

/** The range of options.maxDuration, in ms: a second to 366 days. */
export const MAX_DURATION_RANGE = { min: 1_000, max: 366 * 86_400_000 } as const;

function maxDurationIssue(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const problem = durationProblem(value);
  if (problem !== undefined) return problem;
  const ms = parseDurationMs(value);
  if (ms < MAX_DURATION_RANGE.min || ms > MAX_DURATION_RANGE.max) {
    return `must be from PT1S to P366D, got ${JSON.stringify(value)}`;
  }
  return undefined;
}

/** How long a scan may run: its options.maxDuration, else the service's default (SCAN_MAX_DURATION_MS). */
export function maxDurationMs(options: ScanOptions, defaultMs: number): number {
  return options.maxDuration === undefined ? defaultMs : parseDurationMs(options.maxDuration);
}

function resolveAsOf(asOf: string | number | undefined, now: number, issues: FieldIssue[]): number {
  if (asOf === undefined) return now;
  if (typeof asOf === 'number') {
    if (Number.isSafeInteger(asOf) && inAsOfRange(asOf)) return asOf;
    issues.push({
      path: '/body/asOf',
      message: `expected epoch milliseconds from ${AS_OF_RANGE.min} to ${AS_OF_RANGE.max} (years 1970 to 9999)`,
    });
    return now;
  }
  // The events decoder's rule, so the API and the topics agree on what an instant is: a real
  // calendar date (no 2026-02-30 rolled over into March) and a time only with a zone.
  const ms = parseIsoInstant(asOf);
  if (ms !== undefined && inAsOfRange(ms)) return ms;
  issues.push({
    path: '/body/asOf',
    message:
      'expected an ISO-8601 instant with a zone on a real calendar date in the years 1970 to 9999 (UTC), ' +
      'e.g. "2026-11-01T00:00:00Z"',
  });
  return now;
}

const inAsOfRange = (ms: number) => ms >= AS_OF_RANGE.min && ms <= AS_OF_RANGE.max;

/** The SQL pre-filter for the walk: sound (never drops a match), so rows are re-checked anyway. */
export function prefilterFor(condition: Condition, asOf: number): { filterSql?: string; filterParams: FilterParam[] } {
  // Replica rows hold whole changelog records: the entity's value is at $.value of `record`.
  const { sql, params } = compileConditionToSql(condition, { asOf }, 'record', '$.value');
  // "1" lets every row through: walking without a filter saves SQLite a CASE per row.
  return sql === '1' ? { filterParams: [] } : { filterSql: sql, filterParams: params };
}

/** The rows that match, judged by the rules package itself: the SQL only narrows the candidates. */
export function selectMatches(rows: readonly ReplicaRow[], condition: Condition, asOf: number): ReplicaRow[] {
  const ctx = { asOf };
  return rows.filter((row) => evaluateCondition(condition, row.value as JsonObject, ctx));
}

export interface CommandScan {
  id: string;
  asOf: number;
  spec: ScanSpec;
}

/** One command per matching key. The id is deterministic, so a re-emitted command is applied once. */
export function buildCommand(scan: CommandScan, key: string, version: number, issuedAt: number): UpdateCommand {
  const command: UpdateCommand = {
    commandId: commandIdFor(scan.id, key),
    scanId: scan.id,
    key,
    asOf: scan.asOf,
    condition: scan.spec.condition,
    action: scan.spec.action,
    issuedAt,
  };
  if (scan.spec.options.expectVersion === true) command.expectedVersion = version;
  return command;
}

/** How many of `matches` may still be emitted under options.maxCommands. */
export function emissionBudget(options: ScanOptions, emitted: number, matches: number): number {
  if (options.dryRun === true) return 0;
  if (options.maxCommands === undefined) return matches;
  return Math.max(0, Math.min(matches, options.maxCommands - emitted));
}

/**
 * Keys to walk in the next chunk. An explicit batchSize is used as given; unlimited scans walk
 * CHUNK_SIZE keys. A rate-limited scan otherwise aims at about one second of commands per chunk
 * (from the match ratio seen so far): its cursor then advances about every second, so a restart
 * re-sends little.
 */
export function chunkLimit(
  options: ScanOptions,
  defaultSize: number,
  seen: { scanned: number; matched: number },
): number {
  if (options.batchSize !== undefined) return options.batchSize;
  const size = defaultSize;
  const rate = options.rate ?? 0;
  if (rate <= 0 || options.dryRun === true) return size;
  const ratio = seen.scanned > 0 ? Math.max(seen.matched / seen.scanned, 0.001) : 1;
  const perSecond = Math.ceil(rate / ratio);
  return Math.min(size, Math.max(Math.ceil(rate), perSecond, 1));
}

/** Commands gathered into one batch: recorded, sent and committed together. */
export const COMMANDS_PER_BATCH = 2_000;

/**
 * Commands per producer request. kafkajs encodes a request synchronously (about 15 ms for 500
 * commands, several times that for 2,000), so a batch goes out in a few requests of this size.
 */
export const COMMANDS_PER_REQUEST = 500;

/**
 * How many commands to gather before sending: `perBatch`, or about a second's worth under a rate
 * (the paced rate when given, else the scan's `rate`).
 */
export function commandsPerBatch(options: ScanOptions, perBatch = COMMANDS_PER_BATCH, pacedRate?: number): number {
  const rate = pacedRate ?? options.rate ?? 0;
  return rate > 0 ? Math.max(1, Math.min(perBatch, Math.ceil(rate))) : perBatch;
}

/**
 * An upper bound of the bytes one command record takes (key, value, record framing), per key,
 * without encoding each command: the scan's condition and action are encoded once here.
 */
export function commandSizer(scan: CommandScan): (key: string) => number {
  // The longest numbers a command can carry; the empty key's two quotes are counted with the key.
  const template = buildCommand(scan, '', Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  const fixed = encodeCommand(template).length - 2 + RECORD_OVERHEAD_BYTES;
  return (key) => fixed + Buffer.byteLength(JSON.stringify(key)) + Buffer.byteLength(key);
}

/**
 * The largest record the commands topic takes: Kafka's default max.message.bytes, which the
 * processor gives the commands topic when it creates it.
 */
export const MAX_COMMAND_RECORD_BYTES = DEFAULT_MAX_MESSAGE_BYTES;

/** A key of MAX_KEY_BYTES control characters: in JSON each is a 6-byte \u00XX escape. */
const LONGEST_KEY = '\u0001'.repeat(MAX_KEY_BYTES);

/**
 * The command for the longest key must fit in one record of the commands topic, or that key's
 * command could never be sent. Names the bigger of condition and action, which make its size.
 */
export function commandFitIssues(condition: unknown, action: unknown, options: ScanOptions, at: string): FieldIssue[] {
  const spec = { condition: condition as Condition, action: action as Action, options };
  const scan = { id: 'x'.repeat(MAX_ID_LENGTH), asOf: Number.MAX_SAFE_INTEGER, spec };
  const bytes = commandSizer(scan)(LONGEST_KEY);
  if (bytes <= MAX_COMMAND_RECORD_BYTES) return [];
  const sizeOf = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '');
  const field = sizeOf(action) >= sizeOf(condition) ? 'action' : 'condition';
  return [
    {
      path: `${at}/${field}`,
      message:
        `too large: a command carries the condition and the action, and for a ${MAX_KEY_BYTES}-byte key it ` +
        `would take ${bytes} bytes; the commands topic takes records of at most ${MAX_COMMAND_RECORD_BYTES} bytes ` +
        `(this ${field} is ${sizeOf(field === 'action' ? action : condition)} bytes of JSON)`,
    },
  ];
}
