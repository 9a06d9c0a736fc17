import type { Kafka } from 'kafkajs';
import { BrokerTooOldError } from '../errors';
import { clusterFactoryOf, withMethods } from './internals';
import { API_KEYS, EOS_V2_VERSIONS, assertKafkajsPatched } from './patch';

// Whether a broker speaks what exactly-once v2 sends (see patch.ts).

/** One API's entry in a broker's ApiVersions answer, as kafkajs keeps it (Broker.versions). */
export interface ApiVersionRange {
  minVersion: number;
  maxVersion: number;
}
export type ApiVersionTable = Record<number, ApiVersionRange | undefined>;

/**
 * Throws BrokerTooOldError unless `versions` (one broker's ApiVersions) offers the request
 * versions exactly-once v2 sends; `purpose` starts the message ("EXACTLY_ONCE=v2").
 */
export function assertEosV2Versions(versions: ApiVersionTable, purpose: string): void {
  for (const api of Object.keys(EOS_V2_VERSIONS) as (keyof typeof EOS_V2_VERSIONS)[]) {
    const range = versions[API_KEYS[api]];
    if (!range || range.maxVersion < EOS_V2_VERSIONS[api] || range.minVersion > EOS_V2_VERSIONS[api]) {
      throw new BrokerTooOldError(api, EOS_V2_VERSIONS[api], range?.maxVersion, purpose);
    }
  }
}

interface Cluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findGroupCoordinator(args: { groupId: string }): Promise<{ versions?: ApiVersionTable }>;
}

/**
 * The ApiVersions of `groupId`'s coordinator, the broker that receives TxnOffsetCommit and
 * OffsetFetch (kafkajs gives every broker the seed broker's table: src/cluster/brokerPool.js).
 * Opens and closes a cluster of its own.
 */
export async function groupCoordinatorVersions(kafka: Kafka, groupId: string): Promise<ApiVersionTable> {
  const { factory } = clusterFactoryOf(kafka);
  const cluster = withMethods<Cluster>(factory({}), 'Cluster', ['connect', 'disconnect', 'findGroupCoordinator']);
  await cluster.connect();
  try {
    const coordinator = await cluster.findGroupCoordinator({ groupId });
    return coordinator.versions ?? {};
  } finally {
    await cluster.disconnect().catch(() => undefined);
  }
}

/** Checks at start that the kafkajs patch is installed and `groupId`'s coordinator speaks KIP-447. */
export async function assertEosV2Support(kafka: Kafka, groupId: string, purpose: string): Promise<void> {
  assertKafkajsPatched();
  assertEosV2Versions(await groupCoordinatorVersions(kafka, groupId), purpose);
}

/** Whether `groupId`'s coordinator offers the request versions exactly-once v2 sends (a start-up probe; never throws BrokerTooOldError). */
export async function supportsEosV2(kafka: Kafka, groupId: string): Promise<boolean> {
  try {
    assertEosV2Versions(await groupCoordinatorVersions(kafka, groupId), 'probe');
    return true;
  } catch (err) {
    if (err instanceof BrokerTooOldError) return false;
    throw err;
  }
}
