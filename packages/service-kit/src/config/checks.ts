// Checks both services make of their environment, written once.
import { changelogTopicName } from '@state-relay/contracts';

/** The shortest bearer token either service accepts. */
export const MIN_TOKEN_LENGTH = 16;

/** A refinement: APP_ID and STORE_NAME must together name a valid changelog topic. */
export function checkChangelogName(v: { APP_ID?: string; STORE_NAME?: string }, problems: string[]): void {
  if (v.APP_ID === undefined || v.STORE_NAME === undefined) return;
  try {
    changelogTopicName(v.APP_ID, v.STORE_NAME);
  } catch (err) {
    problems.push(`APP_ID and STORE_NAME: ${(err as Error).message}`);
  }
}
