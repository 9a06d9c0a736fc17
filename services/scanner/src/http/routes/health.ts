import type { Readiness } from '@state-relay/service-kit';
import type { ReplicaHealth } from '../../scans/scan-service';
import { Readiness as ReadinessSchema } from '../schemas';

/**
 * `GET /readyz` of the scanner: 200 once the replica has caught up with the changelog since start,
 * 503 before, with the replica's lag per partition. (The kit serves it with `/healthz`,
 * `/metrics` and `/openapi.json`.)
 */
export function scannerReadiness(replica: ReplicaHealth): Readiness<typeof ReadinessSchema> {
  return {
    description: '200 once the replica has caught up with the changelog since start; 503 before',
    schema: ReadinessSchema,
    report() {
      const partitions = replica.lag();
      return { ready: replica.ready, replicaLag: { total: partitions.reduce((s, p) => s + p.lag, 0), partitions } };
    },
  };
}
