import { UnsupportedKafkajsError } from '../errors';
import { assertKafkajsPatched } from './patch';

/** The kafkajs release whose internals this adapter is written against and tested on. */
export const SUPPORTED_KAFKAJS_VERSION = '2.2.4';

/** The version in the package.json of the kafkajs this package resolves. */
export function installedKafkajsVersion(): string {
  return (require('kafkajs/package.json') as { version: string }).version;
}

/**
 * Throws UnsupportedKafkajsError unless `installed` is SUPPORTED_KAFKAJS_VERSION: the adapter
 * reaches into kafkajs internals that another release may have changed, so start-up refuses
 * rather than failing later in a way that names nothing; KafkajsNotPatchedError without the patch.
 */
export function assertSupportedKafkajs(installed: string = installedKafkajsVersion()): void {
  if (installed !== SUPPORTED_KAFKAJS_VERSION) throw new UnsupportedKafkajsError(installed, SUPPORTED_KAFKAJS_VERSION);
  assertKafkajsPatched();
}
