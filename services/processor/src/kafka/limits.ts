// Record-size limits of the topics the processor creates, in one place: what it creates a topic
// with (max.message.bytes), and what it keeps each record it produces under.
import { DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES, TOPIC_MAX_MESSAGE_BYTES } from '@state-relay/contracts';

// The topics' own limits live with their layout (@state-relay/contracts, topics.ts).
export { DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES, TOPIC_MAX_MESSAGE_BYTES };

/** Room a record batch needs besides an entity's bytes: the key (<= 512 bytes), headers, record and batch framing. */
export const RECORD_ROOM_BYTES = 16_384;

/** ENTITY_MAX_BYTES's default: an entity the changelog created by the processor takes. */
export const DEFAULT_ENTITY_MAX_BYTES = TOPIC_MAX_MESSAGE_BYTES - RECORD_ROOM_BYTES;

/** What a dead letter may take (key, value, headers): it always fits the dead-letter topic. */
export const DEAD_LETTER_MAX_BYTES = DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES - RECORD_ROOM_BYTES;
