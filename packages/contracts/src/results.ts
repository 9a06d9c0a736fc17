import { decodeCommandEnvelope } from './commands';
import { readFiniteNumber, readOneOf, readOptionalNonNegativeInteger, readOptionalString } from './fields';
import { encodeJson } from './json';
import { COMMAND_OUTCOMES, type CommandResult } from './types';

/** Reasons are ours, but cap them so a result never grows without bound. */
const MAX_REASON_LENGTH = 4096;

export function decodeCommandResult(key: Buffer | null, value: Buffer | null): CommandResult {
  const { obj, envelope } = decodeCommandEnvelope(key, value);
  const result: CommandResult = {
    ...envelope,
    outcome: readOneOf(obj, 'outcome', COMMAND_OUTCOMES),
    processedAt: readFiniteNumber(obj, 'processedAt'),
  };
  const reason = readOptionalString(obj, 'reason', MAX_REASON_LENGTH);
  if (reason !== undefined) result.reason = reason;
  const version = readOptionalNonNegativeInteger(obj, 'version');
  if (version !== undefined) result.version = version;
  return result;
}

/** Caps the reason at what decodeCommandResult reads back, so a result always fits its topic and its reader. */
export function encodeCommandResult(result: CommandResult): Buffer {
  const { reason } = result;
  if (reason === undefined || reason.length <= MAX_REASON_LENGTH) return encodeJson(result);
  return encodeJson({ ...result, reason: `${reason.slice(0, MAX_REASON_LENGTH - 1)}…` });
}
