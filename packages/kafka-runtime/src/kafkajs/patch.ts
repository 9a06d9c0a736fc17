import { KafkajsNotPatchedError } from '../errors';

// patches/kafkajs@2.2.4.patch (pnpm.patchedDependencies, applied by every install) adds what
// exactly-once v2 (KIP-447) needs: TxnOffsetCommit v3 (the group generation and member id fence
// a zombie's offsets), OffsetFetch v7 (require_stable), the generation in GROUP_JOIN, and a
// version lookup that picks the newest version both sides implement. See DECISIONS.md.

/** Kafka API keys (src/protocol/requests/apiKeys.js). */
export const API_KEYS = { OffsetFetch: 9, TxnOffsetCommit: 28 } as const;

/** The versions exactly-once v2 sends: the first with the generation, the first with require_stable. */
export const EOS_V2_VERSIONS = { TxnOffsetCommit: 3, OffsetFetch: 7 } as const;

interface RequestTable {
  versions: string[];
}

/** The request versions kafkajs implements for `api` (its src/protocol/requests table). */
export function implementedVersions(api: keyof typeof API_KEYS): number[] {
  const dir = api === 'TxnOffsetCommit' ? 'txnOffsetCommit' : 'offsetFetch';
  const table = require(`kafkajs/src/protocol/requests/${dir}`) as RequestTable;
  return table.versions.map(Number);
}

/** Throws KafkajsNotPatchedError unless the installed kafkajs has the versions exactly-once v2 sends. */
export function assertKafkajsPatched(): void {
  for (const api of Object.keys(EOS_V2_VERSIONS) as (keyof typeof EOS_V2_VERSIONS)[]) {
    if (!implementedVersions(api).includes(EOS_V2_VERSIONS[api])) {
      throw new KafkajsNotPatchedError(`${api} version ${EOS_V2_VERSIONS[api]}`);
    }
  }
}
