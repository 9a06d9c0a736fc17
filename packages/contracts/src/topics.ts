// The topics of a relay deployment and the record limits they are created with: the processor
// provisions them (services/processor/src/kafka/topics.ts), tests and the benchmark seed them
// before it starts (@state-relay/testkit), so both read this one layout.

/** max.message.bytes of the events, commands, changelog and results topics: Kafka's default, which the scanner sizes commands against. */
export const TOPIC_MAX_MESSAGE_BYTES = 1_048_588;

/** max.message.bytes of the dead-letter topic: an input taken at TOPIC_MAX_MESSAGE_BYTES fits with its dlq.* headers. */
export const DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES = 8 * 1_048_576;

/** The names of one deployment's topics. */
export interface RelayTopics {
  eventsTopic: string;
  commandsTopic: string;
  resultsTopic: string;
  deadLetterTopic: string;
  /** `<app>-<store>-changelog`, Kafka Streams' naming (changelogTopicName). */
  changelogTopic: string;
}

/** One topic as it is created: its partitions, compaction and configs. */
export interface TopicLayout {
  topic: string;
  partitions: number;
  compacted?: boolean;
  configs: Record<string, string>;
}

/**
 * The deployment's topics: the two inputs, the changelog (compacted) and the results with
 * `partitions` each and TOPIC_MAX_MESSAGE_BYTES set explicitly (the scanner refuses a scan whose
 * command could not fit), the dead letters in one partition with room for a record at that limit
 * plus its ~250 bytes of dlq.* headers.
 */
export function relayTopicLayout(t: RelayTopics, partitions: number): TopicLayout[] {
  const limit = { 'max.message.bytes': String(TOPIC_MAX_MESSAGE_BYTES) };
  return [
    { topic: t.eventsTopic, partitions, configs: limit },
    { topic: t.commandsTopic, partitions, configs: limit },
    { topic: t.changelogTopic, partitions, compacted: true, configs: limit },
    { topic: t.resultsTopic, partitions, configs: limit },
    {
      topic: t.deadLetterTopic,
      partitions: 1,
      configs: { 'max.message.bytes': String(DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES) },
    },
  ];
}
