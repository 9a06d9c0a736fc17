import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { withDeadline } from '@state-relay/kafka-runtime';
import { requireBearer } from '@state-relay/service-kit';
import type { PartitionLag } from '../../metrics';
import { ProcessorInstance, ProcessorSampler } from '../../processors/processor-sampler';
import type { ScanService } from '../../scans/scan-service';
import type { ScanView } from '../../scans/scan-view';
import { ErrorBody } from '../schemas';

/** The processor group's lag on the commands topic (the scan walk's CommandLagProbe). */
export interface CommandLagSource {
  lag(): Promise<number>;
}

export interface StatusRouteOptions {
  apiToken: string;
  /** Without one (tests of the API alone) the command lag is reported as null. */
  commandLag?: CommandLagSource;
  sampleEveryMs?: number;
  now?: () => number;
  /** The processor instances shown on the page (PROCESSOR_URLS) and the token of their GET /status. */
  processors?: { urls: readonly string[]; token: string };
  /** Readings taken elsewhere (the scanner's, which paces walks by them): the route then reads none itself. */
  sampler?: ProcessorSampler;
}

/** One reading of a scan's cumulative counts. */
interface Sample {
  at: number;
  emitted: number;
  results: number;
  commandLag: number | null;
}

const MAX_SAMPLES = 600; // per scan; past it every other sample goes, so a long scan keeps its whole run
const MAX_SCANS = 10; // scans whose samples are kept (in memory: the chart shows this process's view)
const LAG_TIMEOUT_MS = 2_000;
const FINISHED = new Set(['completed', 'cancelled', 'failed']);

/**
 * Samples the running scan's counts (and the processor's command lag) once a second, so the
 * status page can chart commands sent and results per second over the scan's run, even when
 * it was opened mid-scan. Pure bookkeeping over ScanService; nothing here touches Kafka.
 */
export class ScanRateHistory {
  private readonly samples = new Map<string, Sample[]>();
  private current: string | null = null;
  private ticking = false;

  constructor(
    private readonly scans: Pick<ScanService, 'list' | 'get'>,
    private readonly commandLag: () => Promise<number | null>,
    private readonly now: () => number = Date.now,
  ) {}

  /** One sampling step: the scan being followed, or the running one (among the newest 20). */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      let scan: ScanView | undefined;
      if (this.current !== null) {
        const followed = this.current;
        this.current = null; // unless it is still running (a get that throws drops it too)
        const last = this.scans.get(followed);
        if (FINISHED.has(last.status))
          this.record(last, await this.commandLag()); // its final counts
        else scan = last;
      }
      scan ??= this.scans.list(20, 0).scans.find((s) => s.status === 'running');
      if (!scan) return;
      this.current = scan.id;
      this.record(scan, await this.commandLag());
    } finally {
      this.ticking = false;
    }
  }

  /** The running (or last sampled) scan's id. */
  latest(): string | null {
    return this.current ?? [...this.samples.keys()].at(-1) ?? null;
  }

  /** Rates between consecutive samples, oldest first. */
  points(scanId: string): Array<Static<typeof ChartPoint>> {
    const samples = this.samples.get(scanId) ?? [];
    const points: Array<Static<typeof ChartPoint>> = [];
    for (let i = 1; i < samples.length; i++) {
      const [a, b] = [samples[i - 1]!, samples[i]!];
      const seconds = (b.at - a.at) / 1000;
      if (seconds <= 0) continue;
      points.push({
        at: new Date(b.at).toISOString(),
        sentPerSecond: round(Math.max(0, b.emitted - a.emitted) / seconds),
        resultsPerSecond: round(Math.max(0, b.results - a.results) / seconds),
        commandLag: b.commandLag,
      });
    }
    return points;
  }

  private record(scan: ScanView, commandLag: number | null): void {
    let list = this.samples.get(scan.id);
    if (!list) {
      list = [];
      this.samples.set(scan.id, list);
      while (this.samples.size > MAX_SCANS) this.samples.delete(this.samples.keys().next().value!);
    }
    const results = Object.values(scan.counts.results).reduce((sum, n) => sum + n, 0);
    list.push({ at: this.now(), emitted: scan.counts.emitted, results, commandLag });
    if (list.length > MAX_SAMPLES) {
      const kept = list.filter((_, i) => i % 2 === 0 || i === list!.length - 1);
      list.splice(0, list.length, ...kept);
    }
  }
}

const round = (n: number) => Math.round(n * 10) / 10;

const ChartPoint = Type.Object({
  at: Type.String({ description: 'End of the interval, ISO-8601' }),
  sentPerSecond: Type.Number({ description: 'Commands the scan sent per second over the interval' }),
  resultsPerSecond: Type.Number({ description: 'Results (first per command) recorded per second' }),
  commandLag: Type.Union([Type.Integer(), Type.Null()], { description: 'The processor’s command lag then' }),
});

const StatusQuery = Type.Object(
  { scan: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The scan to chart' })) },
  { additionalProperties: false },
);

const PartitionLagSchema = Type.Object({ partition: Type.Integer(), lag: Type.Integer() });

const StatusBody = Type.Object({
  at: Type.String(),
  commandLag: Type.Union([Type.Integer(), Type.Null()], {
    description:
      'Records on the commands topic the processor’s group has not committed yet (its lag, summed over ' +
      'partitions); null when Kafka did not answer',
  }),
  replicaLag: Type.Object({ total: Type.Integer(), partitions: Type.Array(PartitionLagSchema) }),
  chart: Type.Object({
    scanId: Type.Union([Type.String(), Type.Null()], {
      description: 'The ?scan one, else the running scan, else the last one sampled; null if none',
    }),
    sampleSeconds: Type.Number(),
    points: Type.Array(ChartPoint),
  }),
  processors: Type.Object(
    {
      sampleSeconds: Type.Number(),
      instances: Type.Array(ProcessorInstance, { description: 'One per PROCESSOR_URLS entry, in that order' }),
    },
    { description: 'The processor instances, each read once a second from its GET /status by this scanner' },
  ),
});

/**
 * GET /status: what the status page charts. The processor's command lag now, the replica's lag
 * per partition, and for one scan its commands sent and results per second over time (samples
 * this scanner took while the scan ran; a scan that ran before the scanner started has none).
 */
export async function statusRoutes(app: FastifyInstance, opts: StatusRouteOptions): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const sampleEveryMs = opts.sampleEveryMs ?? 1_000;
  const commandLag = async (): Promise<number | null> => {
    if (!opts.commandLag) return null;
    try {
      return await withDeadline(opts.commandLag.lag(), LAG_TIMEOUT_MS, { fallback: null });
    } catch {
      return null; // Kafka not connected yet, or not answering: the page shows "unknown"
    }
  };
  const history = new ScanRateHistory(app.scans, commandLag, opts.now);
  const timer = setInterval(() => {
    history.tick().catch((err: unknown) => app.log.debug({ err }, 'status sampling failed'));
  }, sampleEveryMs);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
  const processors =
    opts.sampler ??
    new ProcessorSampler({
      urls: opts.processors?.urls ?? [],
      token: opts.processors?.token ?? opts.apiToken,
      ...(opts.now ? { now: opts.now } : {}),
    });
  if (!opts.sampler && (opts.processors?.urls.length ?? 0) > 0) {
    const poll = setInterval(() => void processors.tick(), sampleEveryMs); // tick never throws
    poll.unref();
    app.addHook('onClose', async () => clearInterval(poll));
  }

  app.addHook('onRequest', requireBearer(opts.apiToken));
  api.get(
    '/status',
    {
      schema: {
        tags: ['status'],
        security: [{ bearerAuth: [] }],
        description:
          'For the status page: the processor’s command lag, the replica lag per partition, one ' +
          'scan’s commands sent and results per second over time (sampled every second while it runs), ' +
          'and each processor instance’s status and its series (read every second)',
        querystring: StatusQuery,
        response: { 200: StatusBody, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 500: ErrorBody },
      },
    },
    async (request) => {
      const { scan } = request.query;
      const scanId = scan === undefined ? history.latest() : app.scans.get(scan).id; // 404 for an unknown id
      const partitions: PartitionLag[] = app.replica.lag();
      return {
        at: new Date((opts.now ?? Date.now)()).toISOString(),
        commandLag: await commandLag(),
        replicaLag: { total: partitions.reduce((s, p) => s + p.lag, 0), partitions },
        chart: { scanId, sampleSeconds: sampleEveryMs / 1000, points: scanId === null ? [] : history.points(scanId) },
        processors: { sampleSeconds: sampleEveryMs / 1000, instances: processors.view() },
      };
    },
  );
}
