import { changelogTopicName } from '@state-relay/contracts';
import { newDeployment, PROCESSOR_TOPIC_LIMITS } from '@state-relay/testkit';
import {
  DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES,
  TOPIC_MAX_MESSAGE_BYTES,
} from '../../services/processor/src/kafka/limits';

// testkit creates a deployment's topics as the processor's provisioning would, without
// importing the service (packages never import services): what it mirrors must stay equal.
describe("what testkit mirrors of the processor's topics", () => {
  it('has the record limits the processor creates its topics with', () => {
    expect(PROCESSOR_TOPIC_LIMITS).toEqual({
      topicMaxMessageBytes: TOPIC_MAX_MESSAGE_BYTES,
      deadLetterMaxMessageBytes: DEAD_LETTER_TOPIC_MAX_MESSAGE_BYTES,
    });
  });

  it('names the changelog as the processor derives it from the app id', () => {
    const d = newDeployment('mirror');
    expect(d.changelogTopic).toBe(changelogTopicName(d.appId, 'accounts'));
  });
});
