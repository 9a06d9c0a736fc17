export {
  COMMAND_OUTCOMES,
  MAX_EVENT_TYPE_LENGTH,
  MAX_ID_LENGTH,
  MAX_JSON_DEPTH,
  MAX_KEY_BYTES,
  MAX_REMEMBERED_COMMAND_IDS,
  MAX_VALUE_BYTES,
} from './types';
export type { CommandOutcome, CommandResult, DomainEvent, StoredEntity, UpdateCommand } from './types';
export { DECODE_ERROR_CODES, DecodeError, isDecodeError } from './errors';
export type { DecodeErrorCode } from './errors';
export { decodeKey, encodeJson } from './json';
export { decodeEvent, encodeEvent } from './events';
export { decodeCommand, encodeCommand } from './commands';
export { decodeCommandResult, encodeCommandResult } from './results';
export {
  changelogTopicName,
  decodeStoredEntity,
  encodeStoredEntity,
  parseStoredEntity,
  storedEntitySizeBound,
} from './changelog';
export { INPUT_POSITIONS_HEADER, decodeInputPositions, encodeInputPositions } from './input-positions';
export {
  commandIdFor,
  commandDigest,
  hasSeen,
  seenHas,
  rememberCommand,
  rememberDigest,
  seenCount,
  seenOf,
  isSeen,
  COMMAND_DIGEST_LENGTH,
} from './command-id';
export { parseIsoInstant } from './timestamp';
export { DEAD_LETTER_CODES, DEAD_LETTER_HEADERS, DEFAULT_DEAD_LETTER_MAX_BYTES, deadLetterRecord } from './dead-letter';
export type { DeadLetterMessage, DeadLetterSource, HeaderValue, MessageHeaders } from './dead-letter';
export { DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES, TOPIC_MAX_MESSAGE_BYTES, relayTopicLayout } from './topics';
export type { RelayTopics, TopicLayout } from './topics';
